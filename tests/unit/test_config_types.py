"""Every config section has a typed dataclass (config/types.py) whose fields are the schema's keys,
each annotated with the schema's type; a key added to or renamed in the schema fails here until
its section's class follows. The classes hold no defaults: the schema's fill them."""

from __future__ import annotations

import copy
import dataclasses
import types
import typing

import pytest

from workflow_scripts.config.runs import WORKFLOW_KEYS
from workflow_scripts.config.sections import complete_section, schema, section_defaults
from workflow_scripts.config.train import TrainConfig
from workflow_scripts.config.types import (
    LIST_SECTIONS,
    PATH_SECTIONS,
    SECTION_TYPES,
    ExperimentSection,
    SplitSection,
    TreeSection,
    WindowSection,
    complete_typed_section,
    typed_section,
    typed_sections,
)
from workflow_scripts.errors import InputError

SCALARS = {"integer": int, "number": float, "boolean": bool, "string": str, "null": type(None)}
EXPERIMENT = {"name": "fp_vs_tp", "error_label": "FP", "correct_label": "TP"}


def schema_types(spec: dict) -> frozenset:
    """The Python types a schema value may take: scalars, ("list", items), ("dict", values), or
    ("object",) for an object with properties (a dataclass of its own)."""
    if "oneOf" in spec:
        return frozenset().union(*(schema_types(option) for option in spec["oneOf"]))
    if "enum" in spec:
        return frozenset(type(value) for value in spec["enum"])
    kinds = spec["type"] if isinstance(spec["type"], list) else [spec["type"]]
    found: set = set()
    for kind in kinds:
        if kind == "array":
            found.add(("list", schema_types(spec.get("items", {"type": []}))))
        elif kind == "object" and spec.get("properties"):
            found.add(("object",))
        elif kind == "object":
            found.add(("dict", schema_types(spec["additionalProperties"])))
        else:
            found.add(SCALARS[kind])
    return frozenset(found)


def annotation_types(annotation) -> frozenset:
    """The same for a field's annotation (`X | None`, list[...], dict[str, ...], a dataclass)."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        return frozenset().union(*(annotation_types(arg) for arg in args))
    if origin is list:
        return frozenset({("list", annotation_types(args[0]))})
    if origin is dict:
        assert args[0] is str, annotation
        return frozenset({("dict", annotation_types(args[1]))})
    if dataclasses.is_dataclass(annotation):
        return frozenset({("object",)})
    return frozenset({annotation})


def problems(cls: type, spec: dict, path: str, left_out: tuple[str, ...] = ()) -> list[str]:
    """Where `cls` and the schema object `spec` disagree (field names, types, defaults)."""
    properties = {key: value for key, value in spec["properties"].items() if key not in left_out}
    fields = {field.name: field for field in dataclasses.fields(cls)}
    found = [f"{path}.{key}: in the schema, not in {cls.__name__}" for key in properties.keys() - fields]
    found += [f"{path}.{key}: in {cls.__name__}, not in the schema" for key in fields.keys() - properties]
    hints = typing.get_type_hints(cls)
    required = set(spec.get("required", ()))
    for key in properties.keys() & fields.keys():
        field, sub = fields[key], properties[key]
        if field.default is not dataclasses.MISSING or field.default_factory is not dataclasses.MISSING:
            found.append(f"{path}.{key}: a default in {cls.__name__} (the schema holds them)")
        expected = schema_types(sub)
        if key not in required and "default" not in sub:
            expected |= {type(None)}  # optional without a default: None when left out
        if annotation_types(hints[key]) != expected:
            found.append(
                f"{path}.{key}: {cls.__name__} says {hints[key]}, the schema {sorted(map(str, expected))}"
            )
        if dataclasses.is_dataclass(hints[key]):
            found += problems(hints[key], sub, f"{path}.{key}")
    return found


def section_problems(top: dict) -> list[str]:
    """Every top-level key of the schema `top` against SECTION_TYPES, LIST_SECTIONS, PATH_SECTIONS."""
    found, typed = [], set()
    for name, spec in top["properties"].items():
        if spec.get("type") == "string":
            found += [] if name in PATH_SECTIONS else [f"{name}: a string section not in PATH_SECTIONS"]
        elif spec.get("type") == "array":
            item = LIST_SECTIONS.get(name)
            if item not in SECTION_TYPES:
                found.append(f"{name}: no typed section for its items (LIST_SECTIONS)")
                continue
            typed.add(item)
            found += problems(SECTION_TYPES[item], spec["items"], item)
        elif name not in SECTION_TYPES:
            found.append(f"{name}: no typed section (SECTION_TYPES)")
        else:
            typed.add(name)
            found += problems(SECTION_TYPES[name], spec, name, WORKFLOW_KEYS.get(name, ()))
    found += [f"{name}: typed, but not a schema section" for name in SECTION_TYPES.keys() - typed]
    return found


def test_every_section_class_matches_the_schema():
    found = section_problems(schema())
    assert not found, "\n".join(found)


@pytest.mark.parametrize(
    "change",
    [
        lambda top: top["properties"]["window"]["properties"].update(step={"type": "integer", "default": 1}),
        lambda top: top["properties"]["calling"]["properties"]["paralogs"]["properties"].update(
            spread=top["properties"]["calling"]["properties"]["paralogs"]["properties"].pop("neighbours")
        ),
        lambda top: top["properties"]["demo"]["properties"]["n_genes"].update(type="number"),
        lambda top: top["properties"]["tokenizer"]["properties"]["path"].update(default="x"),
        lambda top: top["properties"].update(tracks={"type": "object", "properties": {}}),
        lambda top: top["properties"]["experiments"]["items"]["properties"].update(note={"type": "string"}),
    ],
    ids=["key added", "nested key renamed", "type changed", "default given", "section added", "item key"],
)
def test_a_schema_change_the_classes_lack_is_found(change):
    changed = copy.deepcopy(schema())
    change(changed)
    assert section_problems(changed)


def differences(shown: dict, completed: dict, left_out: tuple[str, ...] = ()) -> list[str]:
    """Keys where a typed section (as a dict) differs from the completed section it was built
    from; a key absent from the completed one must be None (optional without a default)."""
    found = [key for key in completed.keys() - shown.keys() if key not in left_out]
    for key, value in shown.items():
        if key not in completed:
            found += [] if value is None else [key]
        elif isinstance(value, dict) and isinstance(completed[key], dict):
            found += [f"{key}.{inner}" for inner in differences(value, completed[key])]
        elif value != completed[key]:
            found.append(key)
    return found


@pytest.mark.parametrize("name", sorted(SECTION_TYPES))
def test_every_section_builds_from_the_schema_defaults(name):
    completed = complete_section(name, EXPERIMENT if name == "experiment" else {})
    typed = typed_section(name, completed)
    assert isinstance(typed, SECTION_TYPES[name])
    assert differences(dataclasses.asdict(typed), completed, WORKFLOW_KEYS.get(name, ())) == []
    if name != "experiment":
        assert completed == section_defaults(name)


def test_nested_sections_are_their_own_classes_and_optional_keys_none():
    split = complete_typed_section("split", {"fractions": {"train": 0.6, "val": 0.2, "test": 0.2}})
    assert isinstance(split, SplitSection) and split.fractions.val == 0.2 and split.by == "gene"
    sites = typed_section("sites", section_defaults("sites"))
    assert isinstance(sites.tree, TreeSection) and sites.transfer is None
    assert typed_section("experiment", EXPERIMENT).fold is None
    assert typed_section("experiment", EXPERIMENT).labels() == {"error": "FP", "correct": "TP"}
    assert sites.to_dict()["tree"] == section_defaults("sites")["tree"]


def test_typed_sections_types_each_section_and_keeps_paths_and_lists():
    sections = typed_sections(
        {
            "genome": "g.fa",
            "window": section_defaults("window"),
            "train": section_defaults("train"),
            "experiments": [EXPERIMENT],
        }
    )
    assert sections["genome"] == "g.fa" and sections["window"] == WindowSection(flank=50)
    assert isinstance(sections["train"], TrainConfig)
    assert sections["experiments"] == [ExperimentSection(**EXPERIMENT, fold=None)]


def test_a_key_the_class_lacks_is_refused_and_values_are_checked_first():
    with pytest.raises(TypeError, match="'step'"):
        typed_section("window", {"flank": 5, "step": 1})
    with pytest.raises(InputError, match=r"window\.flank"):
        complete_typed_section("window", {"flank": 0})
    with pytest.raises(KeyError, match="tracks"):
        typed_section("tracks", {})
