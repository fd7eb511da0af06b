"""Bootstrap over genes: ROC-AUC and PR-AUC with 95% percentile intervals, and paired differences.

Windows of one gene share its sequence context and its annotation, so they are not independent:
a replicate draws as many GENES as the test split has, with replacement, and every window of a
drawn gene comes along (a gene drawn twice counts twice). All predictors are scored on the same
replicates, so `reference - baseline` is a paired difference whose interval accounts for the
correlation between the two.

A replicate that drew one class only has no ROC-AUC or PR-AUC; it is dropped and counted. When
fewer than MIN_VALID_FRACTION of the replicates (or fewer than MIN_VALID_REPLICATES) are left, the
interval is None with a reason: intervals built from the surviving replicates would describe a
conditional distribution, not the test set's.

The metrics are those of evaluation.metrics (ties count half); inside the replicate loop both come
from one sort (metrics.curve_areas) without re-checking the inputs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from workflow_scripts.comparison_fields import (
    CONFIDENCE,
    Difference,
    Estimate,
    GroupComparison,
    verdict_of,
)
from workflow_scripts.metrics import average_precision, curve_areas, roc_auc

METRIC_FUNCTIONS: dict[str, Callable] = {"roc_auc": roc_auc, "pr_auc": average_precision}
CURVE_AREAS = ("roc_auc", "pr_auc")  # what metrics.curve_areas returns, in order (same values, one sort)
MIN_VALID_FRACTION = 0.9
MIN_VALID_REPLICATES = 40  # a 95% percentile interval needs ~40 to have one replicate per tail
NO_REPLICATES = "0 bootstrap replicates asked for"  # the reason of every interval then


@dataclass(frozen=True)
class GeneIndex:
    """Window indices grouped by gene: windows of gene g are order[starts[g]:starts[g] + counts[g]]."""

    order: np.ndarray
    starts: np.ndarray
    counts: np.ndarray

    @classmethod
    def from_gene_ids(cls, gene_ids) -> GeneIndex:
        genes = np.asarray(gene_ids).reshape(-1)
        if genes.size == 0:
            raise ValueError("the bootstrap needs at least one window")
        _, gene_of_window, counts = np.unique(genes, return_inverse=True, return_counts=True)
        order = np.argsort(gene_of_window, kind="stable")
        return cls(order=order, starts=np.cumsum(counts) - counts, counts=counts)

    @property
    def n_genes(self) -> int:
        return int(self.counts.size)

    def resample(self, rng: np.random.Generator) -> np.ndarray:
        """Window indices of one replicate: n_genes genes drawn with replacement, each whole."""
        drawn = rng.integers(0, self.n_genes, self.n_genes)
        counts = self.counts[drawn]
        first_of_drawn = np.repeat(np.cumsum(counts) - counts, counts)
        within_gene = np.arange(counts.sum()) - first_of_drawn
        return self.order[np.repeat(self.starts[drawn], counts) + within_gene]


@dataclass(frozen=True)
class Replicates:
    """values[predictor][metric]: one value per replicate, NaN where the replicate was dropped."""

    values: dict[str, dict[str, np.ndarray]]
    valid: np.ndarray

    @property
    def n_valid(self) -> int:
        return int(self.valid.sum())


def as_inputs(labels, scores: Mapping[str, np.ndarray]) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    label_array = np.asarray(labels).reshape(-1).astype(np.int64)
    score_arrays = {name: np.asarray(values, dtype=float).reshape(-1) for name, values in scores.items()}
    for name, values in score_arrays.items():
        if values.shape != label_array.shape:
            raise ValueError(
                f"scores of '{name}' ({values.size}) and labels ({label_array.size}) differ in length"
            )
    return label_array, score_arrays


def bootstrap_replicates(
    labels: np.ndarray, scores: Mapping[str, np.ndarray], genes: GeneIndex, n_replicates: int, seed: int
) -> Replicates:
    """Every metric of every predictor on the same gene-level replicates."""
    if n_replicates < 0:
        raise ValueError("n_replicates must be at least 0 (0: no intervals)")
    rng = np.random.default_rng(seed)
    values = {name: {metric: np.full(n_replicates, np.nan) for metric in METRIC_FUNCTIONS} for name in scores}
    valid = np.zeros(n_replicates, dtype=bool)
    for replicate in range(n_replicates):
        drawn = genes.resample(rng)
        drawn_labels = labels[drawn]
        if drawn_labels.min() == drawn_labels.max():
            continue
        valid[replicate] = True
        for name, score in scores.items():
            areas = dict(zip(CURVE_AREAS, curve_areas(drawn_labels, score[drawn])))
            for metric in METRIC_FUNCTIONS:
                values[name][metric][replicate] = areas[metric]
    return Replicates(values=values, valid=valid)


def interval_shortfall(n_valid: int, n_replicates: int) -> str | None:
    """Why an interval cannot be given from n_valid of n_replicates replicates; None when it can."""
    if n_replicates == 0:
        return NO_REPLICATES
    needed = max(MIN_VALID_REPLICATES, int(np.ceil(MIN_VALID_FRACTION * n_replicates)))
    if n_valid >= needed:
        return None
    return (
        f"only {n_valid} of {n_replicates} replicates drew both classes (need {needed}); "
        "too few genes of one class for an interval"
    )


def estimate(
    point: float | None, replicate_values: np.ndarray, valid: np.ndarray, shortfall: str | None
) -> Estimate:
    """Point estimate with the percentile interval of the valid replicates."""
    if point is None:
        return Estimate(estimate=None, low=None, high=None, reason="one class only in these windows")
    if shortfall is not None:
        return Estimate(estimate=float(point), low=None, high=None, reason=shortfall)
    tail = 100 * (1 - CONFIDENCE) / 2
    low, high = np.percentile(replicate_values[valid], [tail, 100 - tail])
    return Estimate(estimate=float(point), low=float(low), high=float(high), reason=None)


def difference_estimate(
    point: float | None, replicate_values: np.ndarray, valid: np.ndarray, shortfall: str | None
) -> Difference:
    """`estimate` of a paired difference, with its verdict (comparison_fields.verdict_of)."""
    result = estimate(point, replicate_values, valid, shortfall)
    return Difference(**result, verdict=verdict_of(result["low"], result["high"]))


def point_metrics(labels: np.ndarray, scores: Mapping[str, np.ndarray]) -> dict[str, dict[str, float | None]]:
    return {
        name: {metric: function(labels, score) for metric, function in METRIC_FUNCTIONS.items()}
        for name, score in scores.items()
    }


def difference(first: float | None, second: float | None) -> float | None:
    return None if first is None or second is None else first - second


def compare_predictors(
    labels, scores: Mapping[str, np.ndarray], gene_ids, reference: str, n_replicates: int, seed: int
) -> GroupComparison:
    """Each predictor's metrics with intervals, and reference - other on the same replicates.

    labels: 1 = error; scores: {predictor: higher = more likely an error}; gene_ids: the
    resampled unit. `reference` must be one of `scores` (differences are taken against it).
    """
    if reference not in scores:
        raise ValueError(f"reference '{reference}' is not among the predictors {sorted(scores)}")
    label_array, score_arrays = as_inputs(labels, scores)
    genes = GeneIndex.from_gene_ids(gene_ids)
    if genes.order.size != label_array.size:
        raise ValueError(f"gene_ids ({genes.order.size}) and labels ({label_array.size}) differ in length")
    replicates = bootstrap_replicates(label_array, score_arrays, genes, n_replicates, seed)
    points = point_metrics(label_array, score_arrays)
    shortfall = interval_shortfall(replicates.n_valid, n_replicates)
    predictors = {
        name: {
            metric: estimate(
                points[name][metric], replicates.values[name][metric], replicates.valid, shortfall
            )
            for metric in METRIC_FUNCTIONS
        }
        for name in score_arrays
    }
    differences = {
        name: {
            metric: difference_estimate(
                difference(points[reference][metric], points[name][metric]),
                replicates.values[reference][metric] - replicates.values[name][metric],
                replicates.valid,
                shortfall,
            )
            for metric in METRIC_FUNCTIONS
        }
        for name in score_arrays
        if name != reference
    }
    return GroupComparison(
        n=int(label_array.size),
        n_positive=int(label_array.sum()),
        n_genes=genes.n_genes,
        n_valid_replicates=replicates.n_valid,
        n_dropped_replicates=n_replicates - replicates.n_valid,
        predictors=predictors,
        differences=differences,
    )
