"""The model-versus-baselines comparison: its layout, declared once for the writer and the readers.

`evaluation/comparison.compare_with_baselines` writes it (evaluate puts it in metrics.json); plots and
the summary read it with these names only; it lies below the package's folders, since artifacts.py
(metrics.json's fields) and sites/ read it too. Every number is a plain float/int, undefined ones null.

    ComparisonReport
      confidence        0.95: the level of every interval
      n_replicates      bootstrap replicates asked for; seed: their seed
      resampled_unit    "gene_id": whole genes are drawn with replacement
      reference         "model": differences are reference - baseline on the same replicates
      baselines         {name: {"description": ..., details of how it was fitted}} (the ones scored)
      skipped           {name: why it could not be scored} (e.g. no score column)
      matched_by_design {name: why}: baselines the classes are matched on by design (FN vs decoy
                        TN: the base score, with the splice type, the site dinucleotide), so
                        beating them is true by construction (evaluation/by_design.py); {} otherwise
      overall           GroupComparison over all test windows
      per_splice_type   {"donor": GroupComparison, "acceptor": ...}; {} without a splice_type column

    GroupComparison
      n, n_positive, n_genes                     the test windows of the group
      n_valid_replicates, n_dropped_replicates   dropped: a replicate that drew one class only
      predictors   {MODEL or baseline name: {metric: Estimate}}
      differences  {baseline name: {metric: Difference}}: reference minus baseline, paired

    Estimate
      estimate   the metric on the group's windows as they are (null with one class)
      low, high  the 95% percentile interval over the valid replicates (null when too few)
      reason     why estimate or interval is null; null when both exist

    Difference: an Estimate plus
      verdict    BETTER (the interval lies above 0: the model beats this baseline), WORSE (below
                 0), NOT_BETTER (the interval holds 0, or there is no interval)

`comparison_rows(report)` flattens it for tables and plots (ROW_FIELDS, one row per group,
predictor and metric, with the paired difference to the reference and its verdict on the same row).
"""

from __future__ import annotations

from typing import Any, TypedDict

MODEL = "model"
BASE_SCORE = "base_score"  # the base splice-site model's own score, oriented on train
BASE_SCORE_TYPE = "base_score_type"  # the base score and the splice type, a logistic fit on train
SCORE_PROFILE_TREE = "score_profile_tree"  # boosted trees on the base model's donor/acceptor profiles
KMER = "kmer"  # 1..k-mer frequency logistic regression trained on train
CHANCE = "chance"  # one constant score: ROC-AUC 0.5, PR-AUC = prevalence
LENGTH = "length"  # leak detector: window length alone, oriented on train
DINUCLEOTIDE = "dinucleotide"  # leak detector: the intron dinucleotide at the site alone
BASELINES = (BASE_SCORE, BASE_SCORE_TYPE, SCORE_PROFILE_TREE, KMER, CHANCE, LENGTH, DINUCLEOTIDE)
LEAK_DETECTORS = (LENGTH, DINUCLEOTIDE)
PREDICTORS = (MODEL, *BASELINES)
METRICS = ("roc_auc", "pr_auc")
CONFIDENCE = 0.95
RESAMPLED_UNIT = "gene_id"


BETTER, NOT_BETTER, WORSE = "better", "not better", "worse"
VERDICTS = (BETTER, NOT_BETTER, WORSE)


class Estimate(TypedDict):
    estimate: float | None
    low: float | None
    high: float | None
    reason: str | None


class Difference(Estimate):
    verdict: str


class GroupComparison(TypedDict):
    n: int
    n_positive: int
    n_genes: int
    n_valid_replicates: int
    n_dropped_replicates: int
    predictors: dict[str, dict[str, Estimate]]
    differences: dict[str, dict[str, Difference]]


class ComparisonReport(TypedDict):
    confidence: float
    n_replicates: int
    seed: int
    resampled_unit: str
    reference: str
    baselines: dict[str, dict[str, Any]]
    skipped: dict[str, str]
    matched_by_design: dict[str, str]
    overall: GroupComparison
    per_splice_type: dict[str, GroupComparison]


ESTIMATE_FIELDS = tuple(Estimate.__annotations__)
DIFFERENCE_FIELDS = tuple(Difference.__annotations__)
GROUP_FIELDS = tuple(GroupComparison.__annotations__)
REPORT_FIELDS = tuple(ComparisonReport.__annotations__)

# One flat row per (group, predictor, metric), for tables and plots: group is OVERALL or a splice
# type; the difference columns hold reference - predictor (null on the reference's own rows).
OVERALL = "overall"
ROW_FIELDS = (
    "group",
    "predictor",
    "metric",
    "estimate",
    "low",
    "high",
    "difference",
    "difference_low",
    "difference_high",
    "verdict",
)


def verdict_of(low: float | None, high: float | None) -> str:
    """BETTER when the difference's interval lies above 0, WORSE below, NOT_BETTER otherwise."""
    if low is not None and low > 0:
        return BETTER
    if high is not None and high < 0:
        return WORSE
    return NOT_BETTER


def predictor_kind(name: str) -> str:
    """ "model", "leak detector" or "baseline": how tables and plots label a predictor."""
    if name == MODEL:
        return "model"
    return "leak detector" if name in LEAK_DETECTORS else "baseline"


def comparison_rows(report: ComparisonReport) -> list[dict[str, Any]]:
    """The report as ROW_FIELDS rows: overall first, then each splice type; model first."""
    groups = {OVERALL: report["overall"], **report["per_splice_type"]}
    rows = []
    for group_name, group in groups.items():
        for predictor, metrics in group["predictors"].items():
            for metric, value in metrics.items():
                paired = group["differences"].get(predictor, {}).get(metric)
                rows.append(
                    {
                        "group": group_name,
                        "predictor": predictor,
                        "metric": metric,
                        "estimate": value["estimate"],
                        "low": value["low"],
                        "high": value["high"],
                        "difference": paired["estimate"] if paired else None,
                        "difference_low": paired["low"] if paired else None,
                        "difference_high": paired["high"] if paired else None,
                        "verdict": paired["verdict"] if paired else None,
                    }
                )
    return rows
