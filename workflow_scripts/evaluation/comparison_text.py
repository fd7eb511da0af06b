"""The model-versus-baselines report in plain sentences, for the evaluate log.

Every baseline gets one line (both metrics, the paired difference with its 95% interval and the
verdict). A baseline the model does not beat gets a sentence of its own saying so, overall and per
splice type, and a leak detector whose own interval lies above chance gets one too: the windows'
length then tells the classes apart by itself (a shape leak), or the pair of bases at the site
does (sequence content, which the model may use, but must do better than). Baselines the classes
are matched on by design (FN vs decoy TN: by_design.py) get a line saying that beating them is true
by construction.
"""

from __future__ import annotations

from workflow_scripts.comparison_fields import (
    BETTER,
    LEAK_DETECTORS,
    METRICS,
    MODEL,
    OVERALL,
    WORSE,
    ComparisonReport,
    Estimate,
    GroupComparison,
)
from workflow_scripts.evaluation.by_design import by_design_text

METRIC_NAMES = {"roc_auc": "ROC-AUC", "pr_auc": "PR-AUC"}
LEAK_MEANING = {  # what the detector sees, and what it means when it ranks errors above chance
    "length": ("leak: window length alone", "the windows' shape carries the label, not their sequence"),
    "dinucleotide": (
        "the dinucleotide at the site alone",
        "two bases of sequence content carry part of the label; the model must beat this, not chance",
    ),
}
CHANCE_ROC_AUC = 0.5


def number(value: float | None, signed: bool = False) -> str:
    if value is None:
        return "undefined"
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def interval(estimate: Estimate, signed: bool = False) -> str:
    if estimate["low"] is None or estimate["high"] is None:
        return f"no interval: {estimate['reason']}"
    return f"95% interval {number(estimate['low'], signed)} to {number(estimate['high'], signed)}"


def baseline_line(group: GroupComparison, name: str) -> str:
    """'vs kmer: ROC-AUC 0.910 vs 0.850, difference +0.060 (95% interval ...) better; PR-AUC ...'."""
    parts = []
    for metric in METRICS:
        model, baseline = group["predictors"][MODEL][metric], group["predictors"][name][metric]
        difference = group["differences"][name][metric]
        parts.append(
            f"{METRIC_NAMES[metric]} {number(model['estimate'])} vs {number(baseline['estimate'])}, "
            f"difference {number(difference['estimate'], signed=True)} "
            f"({interval(difference, signed=True)}): {difference['verdict']}"
        )
    return f"model vs {name}: " + "; ".join(parts)


def not_beaten_sentences(group: GroupComparison, where: str) -> list[str]:
    """One sentence per baseline and metric where the model's verdict is not BETTER."""
    sentences = []
    for name, metrics in group["differences"].items():
        for metric in METRICS:
            difference = metrics[metric]
            if difference["verdict"] == BETTER:
                continue
            how = "it is worse" if difference["verdict"] == WORSE else "the difference may be zero"
            sentences.append(
                f"{where}the model does NOT beat {name} on {METRIC_NAMES[metric]}: difference "
                f"{number(difference['estimate'], signed=True)} ({interval(difference, signed=True)}); {how}."
            )
    return sentences


def leak_sentences(group: GroupComparison, where: str) -> list[str]:
    sentences = []
    for name in LEAK_DETECTORS:
        roc = group["predictors"].get(name, {}).get("roc_auc")
        if roc and roc["low"] is not None and roc["low"] > CHANCE_ROC_AUC:
            sees, meaning = LEAK_MEANING[name]
            sentences.append(
                f"{where}{sees} ranks errors above chance (ROC-AUC "
                f"{number(roc['estimate'])}, {interval(roc)}): {meaning}."
            )
    return sentences


def by_design_lines(matched: dict[str, str], overall: GroupComparison) -> list[str]:
    """The baselines matched on by design, each with why, and how close the match came: the base
    score's own ROC-AUC (near 0.5 when it held; make_calls logs the KS distance of the scores)."""
    if not matched:
        return []
    lines = [f"{by_design_text(list(matched))}:"] + [f"  {name}: {why}" for name, why in matched.items()]
    roc = overall["predictors"].get("base_score", {}).get("roc_auc")
    if roc is not None:
        lines.append(
            f"  how close the match came: base_score ranks FN against TN at ROC-AUC {number(roc['estimate'])} "
            "(0.5 when the TN scores follow the FN's; make_calls logs the KS distance per splice type)"
        )
    return lines


def comparison_sentences(report: ComparisonReport) -> list[str]:
    """The lines evaluate logs about the baselines, overall first, then per splice type."""
    overall = report["overall"]
    lines = [
        f"baselines on {overall['n']} test windows of {overall['n_genes']} genes "
        f"({report['n_replicates']} gene-level bootstrap replicates):"
    ]
    lines += [f"  {baseline_line(overall, name)}" for name in overall["differences"]]
    lines += [f"  {name} not scored: {why}" for name, why in report["skipped"].items()]
    lines += by_design_lines(report.get("matched_by_design", {}), overall)
    groups = {OVERALL: overall, **report["per_splice_type"]}
    for group_name, group in groups.items():
        where = "" if group_name == OVERALL else f"{group_name} sites: "
        lines += not_beaten_sentences(group, where) + leak_sentences(group, where)
    return lines
