"""A shipped re-scorer's measured numbers (`<name>.measured.json`), read from the runs that measured
them, so no card number is copied by hand: the source run's out-of-fold F1, the target run's
transferred predictors and their differences with intervals, and, given the ortholog benchmark's
report (benchmarks/cross_species_orthologs.py --out), the transfer with orthologs held out; where
the target run scanned whole regions (calling.regions with start annotation), the whole-region
figures too (`whole_region`: every call counts, FP by location, block-bootstrap intervals)."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.site_transfer.ortholog_transfer import HELD_OUT_ERRORSEQ, HELD_OUT_TREE
from workflow_scripts.errors import InputError
from workflow_scripts.sites.predictors import (
    ERRORSEQ,
    KMER,
    PREDICTORS,
    TRANSFER_BASE_TUNED,
    TRANSFER_ERRORSEQ,
    TRANSFER_TREE,
)

OUT_OF_FOLD = (*PREDICTORS, ERRORSEQ, KMER)  # a run's own predictors
TRANSFERRED = (TRANSFER_BASE_TUNED, TRANSFER_TREE, TRANSFER_ERRORSEQ)
# each transferred predictor -> the ortholog report's comparison holding it out, and its held-out name
HELD_OUT = {TRANSFER_TREE: ("tree", HELD_OUT_TREE), TRANSFER_ERRORSEQ: ("deep", HELD_OUT_ERRORSEQ)}


def read_report(path: str, what: str) -> dict:
    try:
        return json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as error:
        raise InputError(path, what, f"not readable ({error})") from None


def rounded(overall: dict, metrics: tuple[str, ...] = ("f1", "precision", "recall")) -> dict:
    return {metric: round(overall[metric], 4) for metric in metrics}


def calls_rows(report: dict, predictors: tuple[str, ...], metrics: tuple[str, ...]) -> list[dict]:
    calls = report["calls"]
    return [
        {"predictor": name, **rounded(calls[name]["overall"], metrics)}
        for name in predictors
        if name in calls
    ]


def transfer_differences(report: dict) -> list[dict]:
    rows = []
    for pair, parts in report["differences"].items():
        if all(side.strip().startswith("transfer_") for side in pair.split(" - ")):
            f1 = parts["overall"]["f1"]
            rows.append({"pair": pair, **{part: round(f1[part], 4) for part in ("estimate", "low", "high")}})
    return rows


def ortholog_numbers(report: dict, genes: int) -> dict:
    """How many target genes have a source ortholog, and each transferred predictor's F1 as shipped
    minus its F1 with every target gene scored by source models that never saw its orthologs."""
    found = report["orthologs"]["with_ortholog"]
    changes = {}
    for predictor, (comparison, held_out) in HELD_OUT.items():
        if comparison in report["comparisons"]:
            calls = report["comparisons"][comparison]["calls"]  # both on the genes it can hold out
            changes[predictor] = round(
                calls[predictor]["overall"]["f1"] - calls[held_out]["overall"]["f1"], 4
            )
    return {
        "target_genes_with_an_ortholog": found,
        "shipped_minus_held_out_f1": changes,
        "note": f"{found} of {genes} target genes share >= 20 exonic 16-mers with a source gene "
        "(benchmarks.cross_species_orthologs)",
    }


def card_numbers(name: str, source: dict, target: dict, described: dict, orthologs: dict | None) -> dict:
    """The measured.json document: `described` holds the target's words (genome, base_model, config)."""
    if not any(key in target["calls"] for key in TRANSFERRED):
        raise InputError("target", "calls", "no transferred predictor: the target run had no sites.transfer")
    genes = target["counts"]["genes"]
    numbers = {
        "rescorer": name,
        "target": {**described, "genes": genes, "sites": target["counts"]["sites"]},
        "transfer": calls_rows(target, TRANSFERRED, ("f1", "precision", "recall")),
        "target_own_out_of_fold": calls_rows(target, OUT_OF_FOLD, ("f1", "precision", "recall")),
        "differences": transfer_differences(target),
        "source_out_of_fold": calls_rows(source, OUT_OF_FOLD, ("f1",)),
        "replicates": target["bootstrap"]["replicates"],
    }
    if orthologs is not None:
        numbers["ortholog_held_out"] = ortholog_numbers(orthologs, genes)
    whole = target.get("whole_region")
    if whole and whole.get("scored") == "regions":
        numbers["whole_region"] = whole_region_numbers(whole)
    return numbers


def whole_region_numbers(whole: dict) -> dict:
    """A whole-region scan's figures (site_metrics.json `whole_region`, sites/whole_region.py):
    every predictor's F1, precision, recall, calls and FP by location, and each difference with
    its block-bootstrap interval."""
    rows = []
    for name in (*TRANSFERRED, *OUT_OF_FOLD):
        if name in whole["calls"]:
            overall = whole["calls"][name]["overall"]
            calls = {"calls": overall["tp"] + overall["fp"], "fp": whole["false_positives_by_location"][name]}
            rows.append({"predictor": name, **rounded(overall), **calls})
    differences = []
    for pair, parts in whole["differences"].items():
        f1 = parts["overall"]["f1"]
        shown = {
            part: None if f1[part] is None else round(f1[part], 4) for part in ("estimate", "low", "high")
        }
        differences.append({"pair": pair, **shown})
    boot = whole["bootstrap"]
    return {
        "calls": rows,
        "differences": differences,
        "intervals": f"{boot['replicates']} replicates over {boot['blocks']} {boot['resampled_unit']}s",
    }
