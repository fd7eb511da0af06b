"""The site_calls rule's settings: the typed `sites:` section itself, with the two `calling:` keys
it shares with make_calls (the base model's threshold, the ±w window that makes a prediction a
TP). Its fields are SitesSection's (config/types.py, checked against the schema) and those two;
nothing is copied by name here."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from workflow_scripts.config.types import CallingSection, SitesSection
from workflow_scripts.errors import InputError

NOT_SUMMARISED = ("transfer",)  # a path, recorded in the report's provenance instead


@dataclass(frozen=True, kw_only=True)
class SiteSettings(SitesSection):
    threshold: float  # calling.threshold: the base model's own cut
    consensus_window: int  # calling.consensus_window: a candidate within ±w of a site is true

    @classmethod
    def from_config(cls, calling: CallingSection, sites: SitesSection) -> SiteSettings:
        if sites.floor > calling.threshold:
            raise InputError(
                "config",
                "sites.floor",
                f"{sites.floor} is above calling.threshold ({calling.threshold}): the base model's "
                "own calls would lose the positions between the two",
            )
        fields = {field.name: getattr(sites, field.name) for field in dataclasses.fields(SitesSection)}
        return cls(threshold=calling.threshold, consensus_window=calling.consensus_window, **fields)

    @classmethod
    def summarised_fields(cls) -> list[str]:
        """What `summary` holds, in its order (the calling keys first), and `from_summary` reads."""
        names = ["threshold", "consensus_window"]
        return names + [
            field.name for field in dataclasses.fields(SitesSection) if field.name not in NOT_SUMMARISED
        ]

    def summary(self) -> dict[str, Any]:
        """site_metrics.json's `settings` (the tree as its arguments)."""
        values = self.to_dict()
        return {name: values[name] for name in self.summarised_fields()}

    @classmethod
    def from_summary(cls, saved: dict[str, Any]) -> SiteSettings:
        """The settings `summary` wrote, back (`transfer` is not among them: None)."""
        return cls.from_completed({name: saved[name] for name in cls.summarised_fields()})
