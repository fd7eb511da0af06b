"""The base of every typed config section (config/types.py): built from a section the schema
completed, taken as it is, and turned back into a dict."""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Mapping
from typing import Any, TypeVar

S = TypeVar("S", bound="Section")


class Section:
    """What every section class shares: built from a completed section, and back to a dict."""

    @classmethod
    def from_completed(cls: type[S], completed: Mapping[str, Any]) -> S:
        """The section as the schema completed it, taken as it is (no schema check again)."""
        fields = {field.name for field in dataclasses.fields(cls)}  # type: ignore[arg-type]
        unknown = sorted(set(completed) - fields)
        if unknown:
            raise TypeError(f"{cls.__name__} has no field {unknown[0]!r}: is the schema's key new?")
        hints = typing.get_type_hints(cls)
        values = {}
        for name in fields:
            value: Any = completed.get(name)  # None: optional, without a default
            nested = hints[name]
            if isinstance(nested, type) and issubclass(nested, Section):
                value = nested.from_completed(value)
            values[name] = value
        return cls(**values)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)  # type: ignore[call-overload]

    def to_completed(self) -> dict[str, Any]:
        """The section as the schema completed it: to_dict without the optional keys left unset
        (None), so the schema takes it again as it is (model.json's `model`, a resume signature)."""
        return {key: value for key, value in self.to_dict().items() if value is not None}
