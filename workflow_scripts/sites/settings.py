"""The site_calls rule's settings: the `sites:` section and the two `calling:` keys it shares
with make_calls (the base model's threshold, the ±w window that makes a prediction a TP)."""

from __future__ import annotations

from dataclasses import dataclass, field

from workflow_scripts.config.types import CallingSection, SitesSection
from workflow_scripts.errors import InputError


@dataclass(frozen=True)
class SiteSettings:
    threshold: float  # calling.threshold: the base model's own cut
    consensus_window: int  # calling.consensus_window: a candidate within ±w of a site is true
    floor: float
    peak_radius: int
    folds: int
    flank: int
    bootstrap_replicates: int
    seed: int
    tree: dict = field(default_factory=dict)
    model: bool = False  # sites.model: errorseq's deep model is a predictor too

    @classmethod
    def from_config(cls, calling: CallingSection, sites: SitesSection) -> SiteSettings:
        if sites.floor > calling.threshold:
            raise InputError(
                "config",
                "sites.floor",
                f"{sites.floor} is above calling.threshold ({calling.threshold}): the base model's "
                "own calls would lose the positions between the two",
            )
        return cls(
            threshold=calling.threshold,
            consensus_window=calling.consensus_window,
            floor=sites.floor,
            peak_radius=sites.peak_radius,
            folds=sites.folds,
            flank=sites.flank,
            bootstrap_replicates=sites.bootstrap_replicates,
            seed=sites.seed,
            tree=sites.tree.to_dict(),
            model=sites.model,
        )

    def summary(self) -> dict:
        return {
            "threshold": self.threshold,
            "consensus_window": self.consensus_window,
            "floor": self.floor,
            "peak_radius": self.peak_radius,
            "folds": self.folds,
            "flank": self.flank,
            "bootstrap_replicates": self.bootstrap_replicates,
            "seed": self.seed,
            "tree": self.tree,
            "model": self.model,
        }
