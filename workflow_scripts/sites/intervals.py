"""Gene-cluster bootstrap intervals of the differences between predictors' site-level calls.

Sites and candidates of one gene cluster share sequence and annotation, so the resampled unit is
the cluster: a replicate draws as many clusters as there are, with replacement, and each drawn
cluster brings all its items' TP, FP and FN (evaluation/bootstrap.py does the same with genes for
ROC-AUC). Every predictor is counted on the same replicates, so `first - second` is a paired
difference. Intervals are 95% percentile intervals (evaluation/bootstrap.estimate); a replicate
where a metric is undefined (no call, no site) is dropped, and too few left gives no interval;
sites.bootstrap_replicates 0 gives none, and says so (config validation refuses 1..39: too few for
any 95% interval).
"""

from __future__ import annotations

import numpy as np

from workflow_scripts.comparison_fields import CONFIDENCE, NOT_BETTER, Difference
from workflow_scripts.evaluation.bootstrap import difference_estimate, interval_shortfall
from workflow_scripts.sites.items import Items
from workflow_scripts.sites.predictors import COMPARED_PAIRS
from workflow_scripts.sites.site_metrics import GROUPS, group_type

METRICS = ("f1", "precision", "recall")
REPLICATES_PER_BATCH = 100  # replicates counted in one matrix product


def pair_name(first: str, second: str) -> str:
    return f"{first} - {second}"


def cluster_counts(items: Items, calls: dict[str, np.ndarray], predictors: list[str]) -> np.ndarray:
    """(clusters, predictors, groups, 3): TP, FP, FN of each cluster."""
    _, cluster = np.unique(items.cluster, return_inverse=True)
    n_clusters = int(cluster.max()) + 1 if len(cluster) else 0
    counts = np.zeros((n_clusters, len(predictors), len(GROUPS), 3))
    for p, name in enumerate(predictors):
        called = items.called(calls[name])
        for g, group in enumerate(GROUPS):
            mask = items.of_type(group_type(group))
            for j, hit in enumerate(
                (called & items.is_site, called & ~items.is_site, ~called & items.is_site)
            ):
                counts[:, p, g, j] = np.bincount(cluster, weights=hit & mask, minlength=n_clusters)
    return counts


def rates(totals: np.ndarray) -> np.ndarray:
    """(..., 3) TP, FP, FN -> (..., 3) F1, precision, recall (NaN where undefined)."""
    tp, fp, fn = totals[..., 0], totals[..., 1], totals[..., 2]
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.stack([2 * tp / (2 * tp + fp + fn), tp / (tp + fp), tp / (tp + fn)], axis=-1)


def replicate_rates(counts: np.ndarray, n_replicates: int, seed: int) -> np.ndarray:
    """(replicates, predictors, groups, 3 metrics) on cluster-level resamples."""
    rng = np.random.default_rng(seed)
    if n_replicates == 0:  # sites.bootstrap_replicates 0: no intervals
        return np.empty((0, *counts.shape[1:]))
    n_clusters = counts.shape[0]
    flat = counts.reshape(n_clusters, -1)
    batches = []
    for start in range(0, n_replicates, REPLICATES_PER_BATCH):
        size = min(REPLICATES_PER_BATCH, n_replicates - start)
        drawn = rng.integers(0, n_clusters, (size, n_clusters))
        weights = np.stack([np.bincount(row, minlength=n_clusters) for row in drawn])
        batches.append(weights @ flat)
    return rates(np.concatenate(batches).reshape(n_replicates, *counts.shape[1:]))


def difference_intervals(items: Items, calls: dict[str, np.ndarray], n_replicates: int, seed: int) -> dict:
    """{"tree - base_tuned": {group: {metric: Difference}}, "base_tuned - base_threshold": ...}:
    every pair of sites/predictors.py's COMPARED_PAIRS whose predictors the calls hold."""
    pairs = tuple(pair for pair in COMPARED_PAIRS if pair[0] in calls and pair[1] in calls)
    return pair_differences(items, calls, pairs, n_replicates, seed)


def pair_differences(items: Items, calls: dict[str, np.ndarray], pairs, n_replicates: int, seed: int) -> dict:
    """{"first - second": {group: {metric: Difference}}} of any `pairs` of predictors: paired
    gene-cluster bootstrap intervals (the same replicates for every pair)."""
    predictors = sorted({name for pair in pairs for name in pair})
    counts = cluster_counts(items, calls, predictors)
    point = rates(counts.sum(axis=0))
    replicates = replicate_rates(counts, n_replicates, seed)
    report: dict[str, dict[str, dict[str, Difference]]] = {}
    for first, second in pairs:
        a, b = predictors.index(first), predictors.index(second)
        report[pair_name(first, second)] = {
            group: {
                metric: paired(
                    point[a, g, m] - point[b, g, m], replicates[:, a, g, m] - replicates[:, b, g, m]
                )
                for m, metric in enumerate(METRICS)
            }
            for g, group in enumerate(GROUPS)
        }
    return report


def paired(point: float, replicate_differences: np.ndarray) -> Difference:
    if np.isnan(point):
        reason = "undefined: no site or no call in this group"
        return Difference(estimate=None, low=None, high=None, reason=reason, verdict=NOT_BETTER)
    valid = np.isfinite(replicate_differences)
    shortfall = interval_shortfall(int(valid.sum()), len(replicate_differences))
    return difference_estimate(float(point), replicate_differences, valid, shortfall)


def bootstrap_facts(n_replicates: int, seed: int, items: Items) -> dict:
    return {
        "confidence": CONFIDENCE,
        "replicates": n_replicates,
        "seed": seed,
        "resampled_unit": "gene_cluster",
        "clusters": int(len(np.unique(items.cluster))),
    }
