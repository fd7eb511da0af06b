"""Typed reads of a JSON document a user hands over: a field of the wrong type or a missing one
is one InputError naming the file and the field's path (`thresholds.tree.donor`), never a
KeyError or an AttributeError further on."""

from __future__ import annotations

import math
from typing import Any

from workflow_scripts.errors import InputError

JSON_KINDS = {
    dict: "an object",
    list: "a list",
    str: "a string",
    int: "an integer",
    float: "a number",
    bool: "true or false",
    type(None): "null",
}


def described(value: Any) -> str:
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if value != value else "infinity"
    for kind in (bool, dict, list, str, int, float, type(None)):
        if isinstance(value, kind):
            return JSON_KINDS[kind]
    return type(value).__name__


def typed(value: Any, kind: type, source: str, name: str) -> Any:
    """`value` when it is of JSON `kind` (float: any finite number; int: no bool, no float)."""
    if kind is float:
        fits = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    elif kind is int:
        fits = isinstance(value, int) and not isinstance(value, bool)
    else:
        fits = isinstance(value, kind)
    if not fits:
        raise InputError(source, name, f"want {JSON_KINDS[kind]}, found {described(value)}")
    return float(value) if kind is float else value


def field(container: dict, key: str, kind: type, source: str, where: str = "") -> Any:
    """container[key] of JSON `kind`; `where` is the container's own path in the document."""
    name = f"{where}.{key}" if where else key
    if key not in container:
        raise InputError(source, name, "missing")
    return typed(container[key], kind, source, name)


def exact_keys(container: dict, keys: set[str], source: str, where: str) -> None:
    """The object at `where` has exactly `keys`: an unknown or a missing one is named."""
    unknown, missing = sorted(set(container) - keys), sorted(keys - set(container))
    if unknown:
        raise InputError(source, f"{where}.{unknown[0]}", f"unknown key (want {', '.join(sorted(keys))})")
    if missing:
        raise InputError(source, f"{where}.{missing[0]}", "missing")
