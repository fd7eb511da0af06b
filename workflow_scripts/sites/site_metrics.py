"""Site-level metrics of the out-of-fold predictors, per splice type and overall.

Calls (items.py: make_calls' counting): TP, FP, FN, precision, recall, F1 of each predictor.
Scores (the base model's score; the tree's, the k-mer baseline's and, with sites.model,
errorseq's out-of-fold probability, pooled over folds):
* PR-AUC: step-wise area, sum of (R_n - R_n-1) * P_n over the distinct item scores, with recall
  over every scored annotated site, so a missed site (no candidate) caps recall below 1;
* top-k accuracy (SpliceAI's metric): with k = the number of annotated sites of the type, the
  share of them hit by the k highest-scoring candidates of that type (overall: hits of both
  types' top k over both types' sites).
A metric with a zero denominator is None (null in site_metrics.json).
"""

from __future__ import annotations

import numpy as np

from workflow_scripts.calling.scores import SPLICE_TYPES
from workflow_scripts.metrics import counts_at_distinct_scores
from workflow_scripts.sites.candidates import Candidates
from workflow_scripts.sites.items import Items
from workflow_scripts.sites.predictors import BASE_THRESHOLD, OPTIONAL_GROUPS, SCORE_COLUMNS, TREE, OutOfFold

GROUPS = ("overall", *SPLICE_TYPES)
BASE_SCORE, TREE_PROBABILITY = SCORE_COLUMNS[BASE_THRESHOLD], SCORE_COLUMNS[TREE]
OPTIONAL_SCORES = tuple(SCORE_COLUMNS[score] for score in OPTIONAL_GROUPS)  # OutOfFold's fields


def group_type(group: str) -> str | None:
    return None if group == "overall" else group


def ratio(numerator: float, denominator: float) -> float | None:
    return float(numerator / denominator) if denominator else None


def call_metrics(called: np.ndarray, is_site: np.ndarray) -> dict:
    tp = int((called & is_site).sum())
    fp = int((called & ~is_site).sum())
    fn = int((~called & is_site).sum())
    return {
        "precision": ratio(tp, tp + fp),
        "recall": ratio(tp, tp + fn),
        "f1": ratio(2 * tp, 2 * tp + fp + fn),
        "tp": tp,
        "fp": fp,
        "fn": fn,
    }


def pr_auc(item_scores: np.ndarray, is_site: np.ndarray) -> float | None:
    """Average precision with recall over all sites (missed ones, score NaN, are never recalled)."""
    n_sites = int(is_site.sum())
    scored = np.isfinite(item_scores)
    if n_sites == 0 or not scored.any():
        return None
    tp, fp, _ = counts_at_distinct_scores(is_site[scored].astype(np.int64), item_scores[scored])
    recall = np.concatenate([[0.0], tp / n_sites])
    return float(np.sum(np.diff(recall) * tp / (tp + fp)))


def top_k_hits(found: Candidates, scores: np.ndarray, splice_type: str) -> tuple[int, int]:
    """(sites hit by the top-k candidates of the type, k = its number of sites)."""
    site_rows = np.flatnonzero(found.sites["splice_type"].to_numpy() == splice_type)
    typed = np.flatnonzero(found.table["splice_type"].to_numpy() == splice_type)
    k = len(site_rows)
    order = typed[np.argsort(-np.nan_to_num(scores[typed], nan=-np.inf), kind="stable")]
    chosen = np.zeros(len(scores) + 1, dtype=bool)  # the last entry: index -1, no candidate
    chosen[order[:k]] = True
    return int(chosen[found.members[site_rows]].any(axis=1).sum()), k


def top_k_accuracy(found: Candidates, scores: np.ndarray, group: str) -> dict:
    types = SPLICE_TYPES if group == "overall" else (group,)
    hits, k = np.sum([top_k_hits(found, scores, t) for t in types], axis=0)
    return {"top_k_accuracy": ratio(hits, k), "k": int(k)}


def score_metrics(found: Candidates, items: Items, scores: np.ndarray, group: str) -> dict:
    mask = items.of_type(group_type(group))
    item_scores = items.scores(scores)[mask]
    return {"pr_auc": pr_auc(item_scores, items.is_site[mask]), **top_k_accuracy(found, scores, group)}


def predictor_calls(items: Items, candidate_calls: np.ndarray) -> dict:
    called = items.called(candidate_calls)
    masks = {group: items.of_type(group_type(group)) for group in GROUPS}
    return {group: call_metrics(called[mask], items.is_site[mask]) for group, mask in masks.items()}


def probabilities(predictions: OutOfFold) -> dict[str, np.ndarray]:
    """Each predictor's P(true site) per candidate: the tree's, and those of this run's options."""
    named = {column: getattr(predictions, column) for column in (TREE_PROBABILITY, *OPTIONAL_SCORES)}
    return {name: values for name, values in named.items() if values is not None}


def metric_report(found: Candidates, items: Items, predictions: OutOfFold) -> dict:
    """{"calls": {predictor: {group: ...}}, "scores": {score: {group: ...}}}."""
    calls = {name: predictor_calls(items, called) for name, called in predictions.calls.items()}
    named_scores = {
        BASE_SCORE: found.table["base_score"].to_numpy().astype(float),
        **probabilities(predictions),
    }
    scores = {
        name: {group: score_metrics(found, items, values, group) for group in GROUPS}
        for name, values in named_scores.items()
    }
    return {"calls": calls, "scores": scores}
