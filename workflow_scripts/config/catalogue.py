"""config/README.md's key table, generated from the schema (the one source of keys and defaults).

python -m workflow_scripts.config.catalogue > config/README.md    (make config-docs)
"""

from __future__ import annotations

import json

from workflow_scripts.config.sections import schema

INTRO = """# Configuration catalogue

Generated from `config/config.schema.yaml` by `make config-docs`; do not edit by hand (a test
checks it is current). `config/config.yaml` holds only the inputs and the experiments; every key
below takes its default from the schema when a config file leaves it out. Override files
(`snakemake --configfile mine.yaml`) are merged key by key over `config/config.yaml`, except lists
(such as `experiments:`), which an override replaces whole. How a key reaches the code:
[docs/architecture.md](../docs/architecture.md).

| key | type | default | meaning |
| --- | --- | --- | --- |
"""


def type_of(spec: dict) -> str:
    if "enum" in spec:
        return " \\| ".join(json.dumps(value) for value in spec["enum"])
    if "oneOf" in spec:
        return " or ".join(type_of(option) for option in spec["oneOf"])
    kind = spec.get("type", "")
    return " or ".join(kind) if isinstance(kind, list) else kind


def rows(properties: dict, prefix: str = "") -> list[str]:
    lines = []
    for key, spec in properties.items():
        name = prefix + key
        if spec.get("type") == "array" and spec.get("items", {}).get("type") == "object":
            lines.append(row(name, spec))
            lines += rows(spec["items"].get("properties", {}), name + "[].")
        elif spec.get("type") == "object" and spec.get("properties"):
            lines += rows(spec["properties"], name + ".")
        else:
            lines.append(row(name, spec))
    return lines


def row(name: str, spec: dict) -> str:
    default = json.dumps(spec["default"]) if "default" in spec else ""
    meaning = " ".join(spec.get("description", "").split()).replace("|", "\\|")
    return f"| `{name}` | {type_of(spec)} | {default} | {meaning} |"


def catalogue() -> str:
    return INTRO + "\n".join(rows(schema()["properties"])) + "\n"


if __name__ == "__main__":
    print(catalogue(), end="")
