"""Check the workflow config against its schema (filling defaults) before any rule runs.

Every problem is an InputError naming the config key, e.g. `config: train.strategy: ...`.
"""

from __future__ import annotations

import copy
import difflib
import math
import re
from pathlib import Path

import jsonschema
import yaml

from workflow_scripts.config.input_mode import INPUT_KEYS, check_input_mode
from workflow_scripts.errors import InputError

FRACTION_TOLERANCE = 1e-6


EXPERIMENT_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")


def load_schema(path: str | Path) -> dict:
    return yaml.safe_load(Path(path).read_text())


class _UniqueKeyLoader(yaml.SafeLoader):
    """A YAML loader that refuses a mapping holding the same key twice (PyYAML keeps the last)."""


def _unique_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    seen: dict = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            line = key_node.start_mark.line + 1
            raise InputError(
                loader.name, str(key), f"duplicate key (line {line}); YAML keeps only the last one"
            )
        seen[key] = True
    return loader.construct_mapping(node, deep=deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _unique_mapping)


def check_config_file(path: str | Path) -> None:
    """A config file Snakemake will merge: readable YAML without duplicate keys."""
    text = Path(path).read_text()
    loader = _UniqueKeyLoader(text)
    loader.name = str(path)
    try:
        loader.get_single_data()
    except yaml.YAMLError as error:
        raise InputError(path, "(yaml)", " ".join(str(error).split())) from None
    finally:
        loader.dispose()


def coerce_strings(value, schema: dict):
    """Turn strings into the schema's scalar types.

    `snakemake --config 'train={epochs: 2}'` delivers nested values as strings ('2').
    """
    kind = schema.get("type")
    if "oneOf" in schema:  # e.g. bucket.boundaries: "auto" or a list
        container = "array" if isinstance(value, list) else "object" if isinstance(value, dict) else None
        for option in schema["oneOf"]:
            if option.get("type") == container:
                return coerce_strings(value, option)
        return value
    if isinstance(kind, list):  # e.g. [integer, "null"]
        if isinstance(value, str) and "null" in kind and value.strip() in ("null", "~"):
            return None
        for option in kind:
            coerced = coerce_strings(value, {**schema, "type": option})
            if coerced is not value:
                return coerced
        return value
    if isinstance(value, dict) and kind == "object":
        props = schema.get("properties", {})
        return {k: coerce_strings(v, props.get(k, {})) for k, v in value.items()}
    if isinstance(value, list) and kind == "array":
        return [coerce_strings(v, schema.get("items", {})) for v in value]
    if kind == "integer" and isinstance(value, float) and value.is_integer():
        return int(value)  # 2.0 in YAML means 2; 2.5 is left for the schema to reject
    if isinstance(value, str) and kind in ("integer", "number", "boolean"):
        parsed = yaml.safe_load(value) if value.strip() else value
        if kind == "number" and isinstance(parsed, int) and not isinstance(parsed, bool):
            parsed = float(parsed)
        return parsed if _matches(parsed, kind) else value
    return value


def _matches(value, kind: str) -> bool:
    if kind == "boolean":
        return isinstance(value, bool)
    if isinstance(value, bool):
        return False
    return isinstance(value, int) if kind == "integer" else isinstance(value, (int, float))


def fill_defaults(value, schema: dict):
    if schema.get("type") != "object" or not isinstance(value, dict):
        return value
    for key, sub in schema.get("properties", {}).items():
        if key not in value and "default" in sub:
            value[key] = copy.deepcopy(sub["default"])
        if key in value:
            value[key] = fill_defaults(value[key], sub)
    return value


def unknown_key_message(error: jsonschema.ValidationError) -> str:
    """'unknown key', and the schema's key it is closest to where one is close (difflib)."""
    known = list(error.schema.get("properties", {}))
    extra = sorted(set(error.instance) - set(known))
    close = difflib.get_close_matches(str(extra[0]), known, n=1) if extra else []
    return f"unknown key; did you mean '{close[0]}'?" if close else "unknown key"


def key_path(error: jsonschema.ValidationError, prefix: str = "") -> str:
    parts = ([prefix] if prefix else []) + [str(p) for p in error.absolute_path]
    if error.validator == "additionalProperties":
        extra = sorted(set(error.instance) - set(error.schema.get("properties", {})))
        return ".".join(parts + extra[:1]) or "(top level)"
    if error.validator == "required":
        return ".".join(parts + [error.message.split("'")[1]])
    return ".".join(parts) or "(top level)"


def check_finite(value, path: str) -> None:
    """YAML's .inf and .nan are numbers to JSON schema; no errorseq setting means them."""
    if isinstance(value, float) and not math.isfinite(value):
        raise InputError("config", path or "(top level)", f"must be a finite number, got {value}")
    if isinstance(value, dict):
        for key, item in value.items():
            check_finite(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            check_finite(item, f"{path}.{index}")


def validate_section(values, schema: dict, prefix: str = ""):
    """Coerce strings, validate and fill defaults; raises InputError naming the first bad key."""
    values = coerce_strings(values, schema)
    check_finite(values, prefix)
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(values), key=lambda e: list(e.absolute_path))
    if errors:
        first = errors[0]
        message = unknown_key_message(first) if first.validator == "additionalProperties" else first.message
        if "propertyNames" in first.relative_schema_path:
            message = f"{first.instance!r} is not a valid environment variable name"
        raise InputError("config", key_path(first, prefix), message)
    return fill_defaults(values, schema)


def validate_config(config: dict, schema: dict) -> dict:
    """Coerce, validate and fill defaults; returns a new dict or raises InputError."""
    config = validate_section(copy.deepcopy(dict(config)), schema)
    for name, values in config.items():
        check_section(name, values)
    check_cross_sections(config)
    return config


def check_split(split: dict) -> None:
    fractions = split["fractions"]
    total = sum(fractions.values())
    if abs(total - 1.0) > FRACTION_TOLERANCE:
        raise InputError("config", "split.fractions", f"must sum to 1 (they sum to {total:g})")


def check_model(model: dict) -> None:
    if model["arch"] == "transformer" and model["d_model"] % model["n_heads"]:
        raise InputError("config", "model.n_heads", "must divide model.d_model for the transformer")


MIN_INTERVAL_REPLICATES = 40  # evaluation/bootstrap.MIN_VALID_REPLICATES: one replicate per 2.5% tail


def check_sites(sites: dict) -> None:
    """sites.bootstrap_replicates: 0 (no intervals, said so) or enough for a 95% interval."""
    replicates = sites["bootstrap_replicates"]
    if 0 < replicates < MIN_INTERVAL_REPLICATES:
        raise InputError(
            "config",
            "sites.bootstrap_replicates",
            f"{replicates} replicates cannot give a 95% interval (it needs at least "
            f"{MIN_INTERVAL_REPLICATES}); use 0 for no intervals, or {MIN_INTERVAL_REPLICATES} or more",
        )


def check_section(name: str, values) -> None:
    """Rules within one section that the schema cannot say: sums, orderings, matching lengths."""
    checks = {"split": check_split, "bucket": check_bucket, "model": check_model, "sites": check_sites}
    if name in checks:
        checks[name](values)


def check_cross_sections(config: dict) -> None:
    """Rules between sections: one input mode, unique names, a tokenizer the model can embed."""
    names = [e["name"] for e in config["experiments"]]
    for index, name in enumerate(names):
        if not EXPERIMENT_NAME.fullmatch(name):
            raise InputError(
                "config",
                f"experiments.{index}.name",
                f"{name!r}: use letters, digits, _ . - (not starting with . or -); "
                "it names folders under results/ and logs/",
            )
    duplicated = sorted({n for n in names if names.count(n) > 1})
    if duplicated:
        raise InputError("config", "experiments.name", f"duplicate experiment name {duplicated[0]!r}")
    check_input_mode({key: config[key] for key in INPUT_KEYS if key in config})  # what it reads
    check_backbone(config["model"], config["tokenizer"])
    check_pretrain(config)


def check_backbone(model: dict, tokenizer: dict) -> None:
    """hf needs model.path; its ids must come from a tokenizer the model can embed."""
    kind = tokenizer["kind"]
    if kind == "hf" and not tokenizer.get("path"):
        raise InputError("config", "tokenizer.path", "tokenizer.kind hf needs a tokenizer directory")
    if model.get("backbone") != "hf":
        if kind == "auto" and tokenizer.get("path"):
            raise InputError("config", "tokenizer.path", "is used with tokenizer.kind hf")
        return
    if not model.get("path"):
        raise InputError(
            "config", "model.path", "backbone hf needs a local model directory or cached hub name"
        )
    if kind == "nucleotide":
        raise InputError(
            "config",
            "tokenizer.kind",
            "nucleotide ids do not fit a Hugging Face model; "
            "use auto (the model's tokenizer), bpe (with model.init random) or hf",
        )
    if kind == "bpe" and model["init"] == "pretrained":
        raise InputError(
            "config",
            "tokenizer.kind",
            "a new BPE vocabulary does not fit pretrained weights; use auto, or model.init random",
        )


def check_pretrain(config: dict) -> None:
    pretrain = config["pretrain"]
    if pretrain.get("enabled") and pretrain.get("source") == "genome" and "sequences" in config:
        raise InputError("config", "pretrain.source", "genome needs genome + calls inputs, not sequences")


def check_bucket(bucket: dict) -> None:
    """Explicit boundaries increase; exactly one of batch_sizes / max_tokens_per_batch."""
    bounds = bucket["boundaries"]
    sizes, budget = bucket.get("batch_sizes"), bucket.get("max_tokens_per_batch")
    if bounds != "auto" and any(b <= a for a, b in zip(bounds, bounds[1:])):
        raise InputError("config", "bucket.boundaries", f"must be strictly increasing (got {bounds})")
    if (sizes is None) == (budget is None):
        raise InputError(
            "config",
            "bucket.batch_sizes",
            "give exactly one of batch_sizes and max_tokens_per_batch (set the other to null)",
        )
    if sizes is not None and bounds == "auto":
        raise InputError(
            "config",
            "bucket.batch_sizes",
            "needs explicit boundaries; with boundaries auto use max_tokens_per_batch",
        )
    if sizes is not None and len(sizes) != len(bounds):
        raise InputError(
            "config",
            "bucket.batch_sizes",
            f"needs one batch size per bucket ({len(bounds)}), got {len(sizes)}",
        )
