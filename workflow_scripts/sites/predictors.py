"""The site-level predictors, out of fold over gene clusters (every candidate scored by a model
that never saw its fold):

* `base_threshold`: the base model's own call, score >= calling.threshold;
* `base_tuned`: score >= a threshold per splice type, the F1-best one on the other folds' items;
* `tree`: a HistGradientBoostingClassifier on the donor and acceptor score profiles and is-donor,
  fitted on the other folds' candidates; its threshold per type is F1-best on the other folds'
  items scored by inner trees that saw neither the test fold nor the item's own fold (nested
  cross-fitting: in-sample probabilities would set it too high).

Thresholds are midway between the best cut and the next lower score, as evaluate's `auto`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier

from workflow_scripts.calling.scores import SPLICE_TYPES
from workflow_scripts.evaluation.metrics import counts_at_distinct_scores
from workflow_scripts.sites.candidates import Candidates
from workflow_scripts.sites.items import Items
from workflow_scripts.sites.settings import SiteSettings

BASE_THRESHOLD, BASE_TUNED, TREE = "base_threshold", "base_tuned", "tree"
PREDICTORS = (BASE_THRESHOLD, BASE_TUNED, TREE)
KMER = "kmer"  # the k-mer baseline on the sequence around the candidate (sites/kmer.py)
ERRORSEQ = "errorseq"  # sites.model: errorseq's deep model (sites/errorseq.py)
TRANSFER_BASE_TUNED, TRANSFER_TREE = "transfer_base_tuned", "transfer_tree"  # sites/rescorer.py
TRANSFER_ERRORSEQ = "transfer_errorseq"  # sites.transfer of a rescorer with deep models
Thresholds = dict[int, dict[str, float]]  # fold -> splice type -> threshold


def f1_best_threshold(item_scores: np.ndarray, is_site: np.ndarray) -> float:
    """The cut maximising site-level F1 (missed sites count as FN); inf when no site is scored."""
    n_sites = int(is_site.sum())
    scored = np.isfinite(item_scores)
    if n_sites == 0 or not is_site[scored].any():
        return float("inf")
    tp, fp, cuts = counts_at_distinct_scores(is_site[scored].astype(np.int64), item_scores[scored])
    f1 = 2 * tp / (tp + fp + n_sites)
    best = int(np.argmax(f1))  # the first maximum: the highest cut on ties
    lower = cuts[best + 1] if best + 1 < len(cuts) else -np.inf
    return float(cuts[best] if not np.isfinite(lower) else (cuts[best] + lower) / 2)


def thresholds_by_type(items: Items, item_scores: np.ndarray, training: np.ndarray) -> dict[str, float]:
    """F1-best threshold of each splice type, from the `training` items only."""
    chosen = {}
    for splice_type in SPLICE_TYPES:
        mask = training & items.of_type(splice_type)
        chosen[splice_type] = f1_best_threshold(item_scores[mask], items.is_site[mask])
    return chosen


def per_candidate(thresholds: Thresholds, folds: np.ndarray, types: np.ndarray) -> np.ndarray:
    """Each candidate's threshold: its fold's, for its splice type."""
    result = np.full(len(folds), np.inf)
    for fold, by_type in thresholds.items():
        for splice_type, value in by_type.items():
            result[(folds == fold) & (types == splice_type)] = value
    return result


def new_tree(params: dict, seed: int) -> HistGradientBoostingClassifier:
    return HistGradientBoostingClassifier(**params, early_stopping=False, random_state=seed)


def fit_and_predict(
    found: Candidates, train: np.ndarray, test: np.ndarray, settings: SiteSettings
) -> np.ndarray:
    """P(true site) of the `test` candidates from a tree fitted on the `train` candidates."""
    labels = found.table["is_true_site"].to_numpy()[train]
    if not test.any():
        return np.empty(0)
    if labels.size == 0 or labels.min() == labels.max():  # one class: its share is the best guess
        return np.full(int(test.sum()), float(labels.mean()) if labels.size else 0.0)
    tree = new_tree(settings.tree, settings.seed).fit(found.features[train], labels)
    return tree.predict_proba(found.features[test])[:, 1]


def inner_probabilities(
    found: Candidates, test_fold: int, folds: list[int], settings: SiteSettings
) -> np.ndarray:
    """Out-of-fold probabilities of the candidates outside `test_fold`, each from a tree fitted on
    the folds that are neither `test_fold` nor its own; NaN in `test_fold`."""
    fold = found.table["fold"].to_numpy()
    result = np.full(len(fold), np.nan)
    for inner in folds:
        if inner == test_fold:
            continue
        train, test = (fold != test_fold) & (fold != inner), fold == inner
        result[test] = fit_and_predict(found, train, test, settings)
    return result


@dataclass
class OutOfFold:
    tree_probability: np.ndarray  # per candidate
    thresholds: dict[str, Thresholds]  # BASE_TUNED and TREE (and KMER, ERRORSEQ)
    calls: dict[str, np.ndarray]  # predictor -> per candidate bool
    kmer_probability: np.ndarray | None = field(default=None)  # the k-mer baseline: per candidate
    errorseq_probability: np.ndarray | None = field(default=None)  # sites.model: per candidate
    transfer_probability: np.ndarray | None = field(default=None)  # sites.transfer: per candidate
    transfer_errorseq_probability: np.ndarray | None = field(default=None)  # and its deep models


def predict_out_of_fold(
    found: Candidates,
    items: Items,
    settings: SiteSettings,
    progress: Callable[[str], None] = lambda line: None,
) -> OutOfFold:
    fold, types = found.table["fold"].to_numpy(), found.table["splice_type"].to_numpy()
    base = found.table["base_score"].to_numpy().astype(float)
    folds = sorted(set(fold.tolist()) | set(items.fold.tolist()))
    probability = np.full(len(fold), np.nan)
    tuned: dict[str, Thresholds] = {BASE_TUNED: {}, TREE: {}}
    for test_fold in folds:
        began = time.perf_counter()
        training = items.fold != test_fold
        training_base = np.where(fold != test_fold, base, np.nan)  # no test-fold candidate counts
        tuned[BASE_TUNED][test_fold] = thresholds_by_type(items, items.scores(training_base), training)
        inner = inner_probabilities(found, test_fold, folds, settings)
        tuned[TREE][test_fold] = thresholds_by_type(items, items.scores(inner), training)
        probability[fold == test_fold] = fit_and_predict(
            found, fold != test_fold, fold == test_fold, settings
        )
        progress(
            f"fold {test_fold} of {len(folds)}: {int((fold == test_fold).sum()):,} test candidates, "
            f"{len(folds)} trees on {int((fold != test_fold).sum()):,} training candidates "
            f"in {time.perf_counter() - began:.1f} s"
        )
    calls = {
        BASE_THRESHOLD: base >= settings.threshold,
        BASE_TUNED: base >= per_candidate(tuned[BASE_TUNED], fold, types),
        TREE: probability >= per_candidate(tuned[TREE], fold, types),
    }
    return OutOfFold(probability, tuned, calls)
