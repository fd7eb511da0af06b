"""The one source of every default: config/config.schema.yaml, read here for rules and code alike.

A rule passes the config sections it needs whole, as one JSON value (`--config`); the entry point
calls `parse_rule_config`, which fills each section's defaults from the schema and checks it
exactly as the workflow did, so a module run by hand gets the same defaults and the same errors.
"""

from __future__ import annotations

import argparse
import copy
import functools
import json
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from workflow_scripts.config.validate import check_section, load_schema, validate_section
from workflow_scripts.errors import InputError

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "config" / "config.schema.yaml"


@functools.cache
def schema() -> dict:
    return load_schema(SCHEMA_PATH)


def section_schema(name: str) -> dict:
    """The schema of a top-level section; `experiment` is one item of `experiments`."""
    properties = schema()["properties"]
    if name == "experiment":
        return properties["experiments"]["items"]
    if name not in properties:
        raise KeyError(f"no config section {name!r} in {SCHEMA_PATH}")
    return properties[name]


def section_defaults(name: str) -> dict:
    """The section as the schema fills it when the user gives none of its keys."""
    return complete_section(name, {})


def complete_section(name: str, values: dict) -> dict:
    """Coerce, check and fill one section; raises InputError naming `<section>.<key>`."""
    completed = validate_section(copy.deepcopy(values), section_schema(name), prefix=name)
    check_section(name, completed)
    return completed


def parse_rule_config(
    text: str, required: tuple[str, ...] = (), keep: Mapping[str, Collection[str] | None] | None = None
) -> dict[str, dict]:
    """`--config` JSON → {section: completed section}; every name in `required` must be there.
    `keep` ({section: None for all its keys, or the keys}): what else the JSON holds is dropped
    before the schema completes it (config/stage.py: a stage reads only what it declared)."""
    try:
        sections = json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError("--config", "(json)", f"not valid JSON: {error.msg}") from None
    if not isinstance(sections, dict):
        raise InputError("--config", "(json)", "expected an object of config sections")
    if keep is not None:
        sections = {name: kept(values, keep[name]) for name, values in sections.items() if name in keep}
    return complete_sections(sections, required)


def kept(values: Any, keys: Collection[str] | None) -> Any:
    """A section's `keys` (all of it when None or not an object)."""
    if keys is None or not isinstance(values, dict):
        return values
    return {key: value for key, value in values.items() if key in keys}


def complete_sections(sections: dict, required: tuple[str, ...] = ()) -> dict[str, dict]:
    """{section: values} → {section: completed section}; a name in `required` that is missing
    is completed from nothing (the schema's defaults)."""
    given = dict(sections)
    for name in required:
        given.setdefault(name, {})
    return {name: complete_section(name, values) for name, values in given.items()}


def add_config_argument(parser: argparse.ArgumentParser, *sections: str) -> None:
    parser.add_argument(
        "--config",
        default="{}",
        help=f"JSON object with the config sections {', '.join(sections)} "
        "(missing keys take the schema's defaults)",
    )


def rule_config_json(config: dict, *sections: str) -> str:
    """What a rule passes as `--config`: the named sections of the validated workflow config (or
    of a run's view of it, config/runs.py), one JSON value: the only place a section becomes it."""
    return json.dumps({name: config[name] for name in sections}, sort_keys=True)
