"""The model against its baselines on the same held-out genes, as one JSON-ready document.

`compare_with_baselines(windows, predictions, cfg, seed)` (the typed `evaluate:` section, the run's
train.seed) fits every baseline of `baselines` on the
train split (the k-mer model's strength on the validation split), scores the test windows that
the model predicted, and bootstraps genes (`bootstrap`) for ROC-AUC and PR-AUC with 95%
intervals and model - baseline differences, overall and per splice type. The layout is
`comparison_fields.ComparisonReport`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import polars as pl

from workflow_scripts.comparison_fields import (
    BASE_SCORE,
    BASE_SCORE_TYPE,
    CHANCE,
    CONFIDENCE,
    DINUCLEOTIDE,
    KMER,
    LENGTH,
    MODEL,
    RESAMPLED_UNIT,
    SCORE_PROFILE_TREE,
    ComparisonReport,
    GroupComparison,
)
from workflow_scripts.config.types import EvaluateSection
from workflow_scripts.evaluation import baselines
from workflow_scripts.evaluation.bootstrap import compare_predictors
from workflow_scripts.evaluation.by_design import matched_by_design
from workflow_scripts.evaluation.profile_tree import score_profile_tree_scores

DESCRIPTIONS = {
    BASE_SCORE: "the base model's score, sign chosen on the train split",
    BASE_SCORE_TYPE: "the base model's score and the splice type, logistic regression fitted on train",
    SCORE_PROFILE_TREE: "gradient-boosted trees on the base model's donor and acceptor score profiles "
    "around the site and the splice type, fitted on train, iterations chosen on val",
    KMER: "logistic regression on 1..k-mer frequencies, trained on train, C chosen on val",
    CHANCE: "a constant score (ROC-AUC 0.5, PR-AUC = prevalence)",
    LENGTH: "leak detector: window length alone, sign chosen on the train split",
    DINUCLEOTIDE: "leak detector: the intron dinucleotide at the site, train error rate per pair",
}


@dataclass(frozen=True)
class ScoredBaselines:
    scores: dict[str, np.ndarray]  # test-window scores, higher = more likely an error
    details: dict[str, dict]  # how each was fitted (JSON-ready)
    skipped: dict[str, str]  # baselines that could not be scored, and why


def predicted_test_windows(windows: pl.DataFrame, predictions: pl.DataFrame) -> pl.DataFrame:
    """The test windows the model predicted, in the predictions' order, with the model's `prob`."""
    test = windows.filter(pl.col("split") == "test")
    joined = predictions.select("id", "prob").join(test, on="id", how="left", maintain_order="left")
    unknown = joined.filter(pl.col("split").is_null())
    if unknown.height:
        raise ValueError(f"{unknown.height} predicted ids are not test windows (first: {unknown['id'][0]})")
    if joined.height == 0:
        raise ValueError("no test predictions to compare")
    return joined


def score_baselines(
    train: pl.DataFrame,
    val: pl.DataFrame,
    test: pl.DataFrame,
    full_length: int,
    cfg: EvaluateSection,
    seed: int,
) -> ScoredBaselines:
    """Every baseline fitted on train (and val) and scored on `test`; unavailable ones skipped.
    `seed`: the run's train.seed, score_profile_tree's random_state."""
    fitters = {
        BASE_SCORE: lambda: baselines.oriented_column(train, test, "score"),
        BASE_SCORE_TYPE: lambda: baselines.score_and_type_scores(train, test),
        SCORE_PROFILE_TREE: lambda: score_profile_tree_scores(
            train, val, test, cfg.profile_flank, full_length, seed
        ),
        KMER: lambda: baselines.kmer_scores(train, val, test, cfg.kmer_max_k),
        CHANCE: lambda: (baselines.chance_scores(test.height), {}),
        LENGTH: lambda: baselines.oriented_column(train, test, "length"),
        DINUCLEOTIDE: lambda: baselines.dinucleotide_scores(train, test, full_length),
    }
    result = ScoredBaselines(scores={}, details={}, skipped={})
    for name, fit in fitters.items():
        try:
            scores, details = fit()
        except baselines.BaselineUnavailable as reason:
            result.skipped[name] = str(reason)
            continue
        result.scores[name] = scores
        result.details[name] = {"description": DESCRIPTIONS[name], **details}
    return result


def compare_group(
    test: pl.DataFrame, scores: Mapping[str, np.ndarray], cfg: EvaluateSection, rows: np.ndarray | None = None
) -> GroupComparison:
    """compare_predictors on the test windows selected by `rows` (all when None)."""
    selected = slice(None) if rows is None else rows
    return compare_predictors(
        test["label"].to_numpy()[selected],
        {name: values[selected] for name, values in scores.items()},
        test[RESAMPLED_UNIT].to_numpy()[selected],
        MODEL,
        cfg.bootstrap_replicates,
        cfg.bootstrap_seed,
    )


@dataclass(frozen=True)
class Comparison:
    report: ComparisonReport
    baseline_scores: dict[str, np.ndarray]  # each scored baseline's score per predicted window, in order


def compare_and_score(
    windows: pl.DataFrame, predictions: pl.DataFrame, cfg: EvaluateSection, seed: int
) -> Comparison:
    """The report, and the baselines' scores of the predicted windows (in the predictions' order)."""
    test = predicted_test_windows(windows, predictions)
    fitted = score_baselines(
        windows.filter(pl.col("split") == "train"),
        windows.filter(pl.col("split") == "val"),
        test,
        int(windows["length"].to_numpy().max()),
        cfg,
        seed,
    )
    scores = {MODEL: test["prob"].to_numpy().astype(float), **fitted.scores}
    per_splice_type = {}
    if "splice_type" in test.columns:
        splice_types = test["splice_type"].to_numpy()
        per_splice_type = {
            str(kind): compare_group(test, scores, cfg, np.flatnonzero(splice_types == kind))
            for kind in sorted(set(splice_types.tolist()))
        }
    report = ComparisonReport(
        confidence=CONFIDENCE,
        n_replicates=cfg.bootstrap_replicates,
        seed=cfg.bootstrap_seed,
        resampled_unit=RESAMPLED_UNIT,
        reference=MODEL,
        baselines=fitted.details,
        skipped=fitted.skipped,
        matched_by_design={n: why for n, why in matched_by_design(test).items() if n in fitted.scores},
        overall=compare_group(test, scores, cfg),
        per_splice_type=per_splice_type,
    )
    return Comparison(report=report, baseline_scores=fitted.scores)


def compare_with_baselines(
    windows: pl.DataFrame, predictions: pl.DataFrame, cfg: EvaluateSection, seed: int
) -> ComparisonReport:
    """windows: windows.parquet (all splits); predictions: the model's test predictions (id, prob)."""
    return compare_and_score(windows, predictions, cfg, seed).report
