"""Which inputs a run's calling.start uses (docs/calling.md), checked across sections before any
rule runs: calls from a table, or made from genome + annotation, scores or regions; an input the
chosen start would silently ignore is refused. One InputError naming the config key."""

from __future__ import annotations

from workflow_scripts.errors import InputError

INPUT_KEYS = ("calling", "sites", "genome", "calls", "sequences")  # all check_input_mode reads


def check_input_mode(config: dict) -> None:
    """Calls from a table (calling.start calls), or made from genome + annotation (docs/calling.md)."""
    calling = config["calling"]
    start = calling["start"]
    check_no_ignored_inputs(config, start)
    if start == "calls":
        if "sequences" not in config and not ("genome" in config and "calls" in config):
            raise InputError("config", "genome", "give genome and calls, or sequences")
        return
    if "sequences" in config:
        raise InputError(
            "config",
            "calling.start",
            f"{start} makes calls from the genome; drop sequences or use start calls",
        )
    if "genome" not in config:
        raise InputError("config", "genome", f"calling.start {start} needs the genome FASTA")
    if start == "regions":
        check_regions_start(config)
        return
    if not calling.get("annotation"):
        raise InputError(
            "config", "calling.annotation", f"calling.start {start} needs a GTF or GFF3 annotation"
        )
    if start == "scores" and not calling.get("scores"):
        raise InputError("config", "calling.scores", "calling.start scores needs a scores table")
    if start == "annotation" and not calling.get("base_model", {}).get("weights"):
        raise InputError(
            "config",
            "calling.base_model.weights",
            "calling.start annotation needs the base model's weights: SpliceAI's Keras .h5 or "
            "OpenSpliceAI's .pt files (a directory or a list), e.g. the spliceai package's models/ folder",
        )


def check_regions_start(config: dict) -> None:
    """calling.start regions: a genome without an annotation, scored by the base model and
    re-scored by another genome's re-scorer, or without one (sites.transfer unset) called by the
    base model alone at calling.threshold (rules/rescore.smk, docs/sites.md)."""
    calling, sites = config["calling"], config.get("sites") or {}
    if not (calling.get("base_model") or {}).get("weights"):
        raise InputError(
            "config",
            "calling.base_model.weights",
            "calling.start regions needs the base model's weights: SpliceAI's Keras .h5 or "
            "OpenSpliceAI's .pt files (a directory or a list), e.g. the spliceai package's models/ folder",
        )
    if sites.get("model"):
        raise InputError(
            "config", "sites.model", "trains on annotated sites, and calling.start regions has none: drop it"
        )
    if calling.get("region"):
        raise InputError(
            "config",
            "calling.region",
            "selects annotated genes, and calling.start regions has none: give calling.regions, a BED",
        )


IGNORED_BY_START = {  # calling.start -> the inputs it would silently ignore
    "calls": (
        "calling.annotation",
        "calling.scores",
        "calling.base_model.weights",
        "calling.regions",
        "sites.transfer",
    ),
    "scores": ("calling.regions",),  # base_model.weights there: the model that made the scores
    "annotation": ("calling.scores",),  # calling.regions: score whole regions, the annotation labels
    "regions": ("calling.annotation", "calling.scores"),
}  # `calls` is not among them: config.yaml's demo calls are merged under every --configfile


def given_inputs(config: dict) -> dict[str, object]:
    calling = config.get("calling", {})
    return {
        "calling.annotation": calling.get("annotation"),
        "calling.scores": calling.get("scores"),
        "calling.base_model.weights": (calling.get("base_model") or {}).get("weights"),
        "calling.regions": calling.get("regions"),  # start regions: the BED to score
        "sites.transfer": (config.get("sites") or {}).get("transfer"),  # site_calls: start scores, annotation
    }


def check_no_ignored_inputs(config: dict, start: str) -> None:
    """An input the chosen calling.start does not read would be ignored and the run would use
    something else (the demo calls, or the other start's inputs): refuse, naming it."""
    given = given_inputs(config)
    named = [key for key in IGNORED_BY_START[start] if given[key]]
    if not named:
        return
    if start == "calls":
        advice = "set calling.start to scores, annotation or regions to make calls from them (docs/calling.md), or drop them"
        raise InputError(
            "config",
            "calling.start",
            f"is calls (the default), which ignores {' and '.join(named)}; {advice}",
        )
    raise InputError(
        "config",
        "calling.start",
        f"is {start}, which ignores {' and '.join(named)}; drop them or change the start",
    )
