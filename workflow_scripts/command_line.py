"""A rule's path arguments, derived from the names of its inputs and outputs.

An input named `gene_clusters` is passed as `--gene-clusters PATH...` and an output named
`weights` as `--out-weights PATH...`. The rules' shell lines (`path_args` in rules/common.smk) and
the tests and benchmarks that run a program directly (testkit/rule_commands.py) both build their
arguments here, so a path is written once: in the rule, or in the test's fixture.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from os import PathLike

PathValue = str | PathLike | Iterable[str | PathLike] | None


def input_flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def output_flag(name: str) -> str:
    return "--out-" + name.replace("_", "-")


def path_list(value: PathValue) -> list[str]:
    """One path, several, or none (an optional input that is off: None or an empty list)."""
    if value is None:
        return []
    if isinstance(value, str | PathLike):
        return [str(value)]
    return [str(path) for path in value]


def path_flags(inputs: Mapping[str, PathValue], outputs: Mapping[str, PathValue]) -> list[str]:
    """`--<input> PATH... --out-<output> PATH...` in the order given; a name without paths is left
    out, so an optional input that is off adds no flag."""
    args: list[str] = []
    for flag, value in [
        *((input_flag(name), value) for name, value in inputs.items()),
        *((output_flag(name), value) for name, value in outputs.items()),
    ]:
        paths = path_list(value)
        if paths:
            args += [flag, *paths]
    return args
