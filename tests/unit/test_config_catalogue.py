"""config/README.md is generated from the schema; the schema holds only JSON-schema keywords."""

from workflow_scripts.config.catalogue import catalogue
from workflow_scripts.config.sections import SCHEMA_PATH, schema

KEYWORDS = {
    "type",
    "properties",
    "additionalProperties",
    "required",
    "default",
    "description",
    "enum",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minItems",
    "maxItems",
    "items",
    "oneOf",
    "anyOf",
    "pattern",
    "$schema",
    "const",
    "uniqueItems",
    "propertyNames",
}


def keyword_problems(spec, path="(schema)"):
    problems = []
    if isinstance(spec, dict):
        for key, value in spec.items():
            if key not in KEYWORDS:
                problems.append(f"{path}: {key!r}")
            if key == "properties":
                problems += [
                    p for name, sub in value.items() for p in keyword_problems(sub, f"{path}.{name}")
                ]
            elif key in ("items", "additionalProperties"):
                problems += keyword_problems(value, f"{path}[]")
            elif key in ("oneOf", "anyOf"):
                problems += [p for option in value for p in keyword_problems(option, path)]
    return problems


def test_schema_has_no_stray_keys_such_as_a_description_cut_at_a_comma():
    assert keyword_problems(schema()) == []


def test_every_key_has_a_row_and_the_catalogue_is_current():
    text = catalogue()
    for key in ("train.lr", "bucket.max_tokens_per_batch", "experiments[].name", "evaluate.threshold"):
        assert f"| `{key}` |" in text
    readme = (SCHEMA_PATH.parent / "README.md").read_text()
    assert readme == text, "config/README.md is stale: run make config-docs"


def undescribed(spec, path=""):
    """Dotted names of the keys (sections included) that have no description."""
    missing = []
    for name, sub in spec.get("properties", {}).items():
        key = f"{path}.{name}" if path else name
        if "description" not in sub:
            missing.append(key)
        missing += undescribed(sub, key)
        if isinstance(sub.get("items"), dict):
            missing += undescribed(sub["items"], f"{key}[]")
    return missing


def test_every_key_and_section_is_described():
    assert undescribed(schema()) == []
