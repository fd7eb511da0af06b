"""The answer first: does the model beat its baselines? One sentence per run, from metrics.json.

    fp_vs_tp (ROC-AUC 0.91 [0.88, 0.94]): the model beats the base model's score by +0.08 [0.04, 0.11]
    ROC-AUC; it does not beat the k-mer model (-0.01 [-0.05, 0.03]); it also beats chance and the
    leak detectors.

ROC-AUC on all test windows, the paired difference model - baseline with its 95% interval, and the
verdict of comparison_fields (better: the interval lies above 0). The base model's score and the
k-mer model are always named, and the base score with the splice type where it was scored; chance and the leak detectors with their numbers only when the model
does not beat them. Where the classes are matched on a baseline by design (FN vs decoy TN: the
base score, also with the splice type, and the site dinucleotide; by_design.py) the sentence ends
by saying that beating it is true by construction. summary.html opens with these sentences and the
summarize rule prints them on the console; an experiment with several runs gets `spread_sentence` too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from workflow_scripts.artifacts import SUMMARY_MEAN, SUMMARY_SD
from workflow_scripts.comparison_fields import (
    BASE_SCORE,
    BASE_SCORE_TYPE,
    BETTER,
    CHANCE,
    DINUCLEOTIDE,
    KMER,
    LENGTH,
    MODEL,
    SCORE_PROFILE_TREE,
    WORSE,
    Estimate,
)
from workflow_scripts.evaluation.by_design import by_design_text

METRIC, METRIC_NAME = "roc_auc", "ROC-AUC"
NAMES = {
    BASE_SCORE: "the base model's score",
    BASE_SCORE_TYPE: "the base score with the splice type",
    SCORE_PROFILE_TREE: "the trees on the base model's score profiles",
    KMER: "the k-mer model",
    CHANCE: "chance",
    LENGTH: "window length alone",
    DINUCLEOTIDE: "the site dinucleotide alone",
}
NAMED = (BASE_SCORE, BASE_SCORE_TYPE, SCORE_PROFILE_TREE, KMER)  # the baselines a reader came for
OTHERS = (CHANCE, LENGTH, DINUCLEOTIDE)  # named with numbers only when the model does not beat them


def short(value: float, signed: bool = False) -> str:
    text = f"{value:+.2f}" if signed else f"{value:.2f}"
    return "0.00" if text == "-0.00" else text


def with_interval(estimate: Estimate, signed: bool = False) -> str:
    """'+0.08 [0.04, 0.11]'; 'undefined' without an estimate, no brackets without an interval."""
    if estimate["estimate"] is None:
        return "undefined"
    text = short(estimate["estimate"], signed)
    if estimate["low"] is None or estimate["high"] is None:
        return f"{text} (no interval)"
    return f"{text} [{short(estimate['low'])}, {short(estimate['high'])}]"


def join_and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def says_nothing(estimate: Mapping[str, Any] | None) -> bool:
    """A ROC-AUC of exactly 0.5 in every replicate: a score that is the same for every window
    (e.g. window length when all windows have one length), said nothing by construction."""
    return estimate is not None and (estimate["estimate"], estimate["low"], estimate["high"]) == (
        0.5,
        0.5,
        0.5,
    )


def clauses(group: dict) -> list[str]:
    """The verdict clauses, subject 'it': beaten named baselines first, then what is not beaten;
    baselines but chance that say nothing by construction are left out."""
    differences, predictors = group["differences"], group["predictors"]
    present = [
        name
        for name in (*NAMED, *OTHERS)
        if name in differences and (name == CHANCE or not says_nothing(predictors[name].get(METRIC)))
    ]
    verdict = {name: differences[name][METRIC]["verdict"] for name in present}
    number = {name: with_interval(differences[name][METRIC], signed=True) for name in present}
    beaten = [f"{NAMES[n]} by {number[n]}" for n in present if n in NAMED and verdict[n] == BETTER]
    found = [f"it beats {join_and(beaten)} {METRIC_NAME}"] if beaten else []
    not_better = [n for n in present if verdict[n] not in (BETTER, WORSE)]
    worse = [n for n in present if verdict[n] == WORSE]
    for words, chosen in (("it does not beat", not_better), ("it is worse than", worse)):
        if chosen:
            found.append(f"{words} {join_and([f'{NAMES[n]} ({number[n]})' for n in chosen])}")
    rest = [NAMES[n] for n in present if n in OTHERS and verdict[n] == BETTER]
    if rest:
        found.append(f"it {'also ' if found else ''}beats {join_and(rest)}")
    return found


def not_scored(name: str, why: str) -> str:
    """'X: not scored, <why up to its first colon>' (the rest of why is in metrics.json)."""
    return f"{NAMES.get(name, name)}: not scored, {why.split(': ')[0]}"


def answer_sentence(metrics: dict) -> str:
    """One run's sentence (module docstring)."""
    overall = metrics["comparison"]["overall"]
    model = overall["predictors"][MODEL][METRIC]
    head = f"{metrics['experiment']} ({METRIC_NAME} {with_interval(model)})"
    if model["estimate"] is None:
        return f"{head}: no answer, {model['reason']}."
    said = clauses(overall)
    skipped = [not_scored(name, why) for name, why in metrics["comparison"]["skipped"].items()]
    if not said:
        return f"{head}: no baseline was scored."
    said[0] = "the model" + said[0].removeprefix("it")
    matched = [NAMES.get(name, name) for name in metrics["comparison"].get("matched_by_design", {})]
    by_design = [by_design_text(matched)] if matched else []
    return f"{head}: {'; '.join(said + skipped + by_design)}."


def spread(mean: dict, sd: dict, column: str) -> str:
    if mean.get(column) is None:
        return "not scored"
    return f"{mean[column]:.3f} ± {sd[column]:.3f}" if sd.get(column) is not None else f"{mean[column]:.3f}"


def spread_sentence(mean: dict, sd: dict) -> str:
    """An experiment's mean ± sd over its runs (summary.tsv's mean and sd rows)."""
    parts = [f"model {METRIC_NAME} {spread(mean, sd, f'{MODEL}_{METRIC}')}"] + [
        f"model - {name} {spread(mean, sd, f'{MODEL}_minus_{name}_{METRIC}')}" for name in NAMED
    ]
    return f"{mean['experiment']}: {mean['runs']} runs, mean ± sd: " + ", ".join(parts)


def summary_sentences(documents: list[dict], spread: list[dict]) -> list[str]:
    """A sentence per run (its metrics.json), then one per experiment with several runs
    (`spread`: summary.tsv's mean and sd rows)."""
    by_key = {(row["group"], row["statistic"]): row for row in spread}
    groups = dict.fromkeys(row["group"] for row in spread)
    spreads = [spread_sentence(by_key[(g, SUMMARY_MEAN)], by_key[(g, SUMMARY_SD)]) for g in groups]
    return [answer_sentence(document) for document in documents] + spreads
