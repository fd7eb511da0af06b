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
from typing import TYPE_CHECKING

import numpy as np

from workflow_scripts.calling.scores import SPLICE_TYPES
from workflow_scripts.config.types import TreeSection
from workflow_scripts.metrics import counts_at_distinct_scores
from workflow_scripts.progress import LOG_EVERY_S, TimeLeft, duration
from workflow_scripts.sites.candidates import Candidates
from workflow_scripts.sites.items import Items
from workflow_scripts.sites.settings import SiteSettings

if TYPE_CHECKING:  # scikit-learn only where a tree is fitted: the names below are read at parse time
    from sklearn.ensemble import HistGradientBoostingClassifier

BASE_THRESHOLD, BASE_TUNED, TREE = "base_threshold", "base_tuned", "tree"
PREDICTORS = (BASE_THRESHOLD, BASE_TUNED, TREE)
KMER = "kmer"  # the k-mer baseline on the sequence around the candidate (sites/kmer.py)
ERRORSEQ = "errorseq"  # sites.model: errorseq's deep model (sites/errorseq.py)
TRANSFER_BASE_TUNED, TRANSFER_TREE = "transfer_base_tuned", "transfer_tree"  # sites/rescorer.py
TRANSFER_ERRORSEQ = "transfer_errorseq"  # sites.transfer of a rescorer with deep models
# every site predictor sites/recommend.py may choose (k-mer aside), the names a re-scorer records
RECOMMENDABLE = (
    BASE_THRESHOLD,
    BASE_TUNED,
    TREE,
    ERRORSEQ,
    TRANSFER_BASE_TUNED,
    TRANSFER_TREE,
    TRANSFER_ERRORSEQ,
)
# each predictor's columns in corrected_calls.parquet (sites/outputs.py), spelled here only: its
# call, its threshold per candidate (the tuned predictors) and the score its call thresholds
CALL_COLUMNS = {name: f"call_{name}" for name in (*RECOMMENDABLE, KMER)}
THRESHOLD_COLUMNS = {name: f"{name}_threshold" for name in (*RECOMMENDABLE, KMER) if name != BASE_THRESHOLD}
SCORE_COLUMNS = {
    BASE_THRESHOLD: "base_score",
    BASE_TUNED: "base_score",
    TREE: "tree_probability",
    KMER: "kmer_probability",
    ERRORSEQ: "errorseq_probability",
    TRANSFER_BASE_TUNED: "base_score",
    TRANSFER_TREE: "transfer_probability",
    TRANSFER_ERRORSEQ: "transfer_errorseq_probability",
}
# the predictors an optional score (an OutOfFold field named as its column) adds to the table,
# after it: their calls, then their thresholds (sites/outputs.py)
OPTIONAL_GROUPS = {
    KMER: (KMER,),
    ERRORSEQ: (ERRORSEQ,),
    TRANSFER_TREE: (TRANSFER_BASE_TUNED, TRANSFER_TREE),
    TRANSFER_ERRORSEQ: (TRANSFER_ERRORSEQ,),
}
# the differences site_metrics.json gives intervals for (first - second), in this order, each
# where a run's calls hold both predictors (sites/intervals.py)
COMPARED_PAIRS = (
    (TREE, BASE_TUNED),
    (BASE_TUNED, BASE_THRESHOLD),
    (TREE, KMER),
    (KMER, BASE_TUNED),
    (ERRORSEQ, TREE),
    (ERRORSEQ, BASE_TUNED),
    (ERRORSEQ, KMER),
    (TRANSFER_TREE, TRANSFER_BASE_TUNED),
    (TRANSFER_BASE_TUNED, BASE_THRESHOLD),
    (TREE, TRANSFER_TREE),
    (TRANSFER_ERRORSEQ, TRANSFER_TREE),
    (TRANSFER_ERRORSEQ, TRANSFER_BASE_TUNED),
)
# the re-scorers sites/recommend.py may pick, each with the threshold it must beat, in the order
# it weighs them; and the order sites/whole_region.py sets each against the base model's calls
RESCORERS = {
    ERRORSEQ: BASE_TUNED,
    TREE: BASE_TUNED,
    TRANSFER_ERRORSEQ: TRANSFER_BASE_TUNED,
    TRANSFER_TREE: TRANSFER_BASE_TUNED,
}
OVER_THE_BASE = (TREE, ERRORSEQ, TRANSFER_TREE, TRANSFER_ERRORSEQ)
# what each predictor is, in the order site_summary.html's tables list them (sites/summary.py)
DESCRIPTIONS = {
    ERRORSEQ: "errorseq's deep model (sites.model)",
    TREE: "tree on the score profiles",
    KMER: "k-mer model on the sequence alone",
    BASE_TUNED: "base model, threshold re-tuned per splice type",
    BASE_THRESHOLD: "base model at calling.threshold",
    TRANSFER_ERRORSEQ: "the source genome's deep models",
    TRANSFER_TREE: "the source genome's tree",
    TRANSFER_BASE_TUNED: "base model at the source genome's thresholds",
}
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


def new_tree(tree: TreeSection, seed: int) -> HistGradientBoostingClassifier:
    from sklearn.ensemble import HistGradientBoostingClassifier

    return HistGradientBoostingClassifier(**tree.to_dict(), early_stopping=False, random_state=seed)


def fit_and_predict(
    found: Candidates, train: np.ndarray, test: np.ndarray, settings: SiteSettings
) -> np.ndarray:
    """P(true site) of the `test` candidates from a tree fitted on the `train` candidates."""
    labels = found.table["is_true_site"].to_numpy()[train]
    if not test.any():
        return np.empty(0)
    if labels.size == 0 or labels.min() == labels.max():  # one class: its share is the best guess
        return np.full(int(test.sum()), float(labels.mean()) if labels.size else 0.0)
    features = with_unscored_columns_constant(found.features, train)
    tree = new_tree(settings.tree, settings.seed).fit(features[train], labels)
    return tree.predict_proba(features[test])[:, 1]


def with_unscored_columns_constant(features: np.ndarray, train: np.ndarray) -> np.ndarray:
    """The features with every column that no `train` row scores (all NaN: a flank reaching past
    every training gene) set to 0.0, a constant the tree never splits on: scikit-learn's binning
    fails on an all-missing column ("window shape cannot be larger than input array shape")."""
    empty = ~np.isfinite(features[train]).any(axis=0) if train.any() else np.zeros(features.shape[1], bool)
    if not empty.any():
        return features
    filled = features.copy()
    filled[:, empty] = 0.0
    return filled


def inner_probabilities(
    found: Candidates,
    test_fold: int,
    folds: list[int],
    settings: SiteSettings,
    clock: FitClock | None = None,
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
        if clock is not None:
            clock.fitted(int(train.sum()), f"fold {test_fold} of {len(folds)}: inner tree for fold {inner}")
    return result


LARGE_FLANK = 50  # sites.flank above this: a warning that the tree's fits slow down in proportion
REFERENCE_FLANK = 25  # the flank the warning compares with (103 features)


def tree_cost_lines(found: Candidates, settings: SiteSettings, folds: int) -> list[str]:
    """What the trees will cost, before the first fold: fits, candidates, features; with a large
    sites.flank, a warning that the fits take about (its features / flank 25's) times as long."""
    features = found.features.shape[1]
    lines = [
        f"trees: {folds * folds} fits ({folds} folds, each {folds - 1} inner and 1 outer) on up to "
        f"{found.table.height:,} candidates x {features:,} features, {settings.tree.max_iter} rounds each"
    ]
    if settings.flank > LARGE_FLANK:
        reference = 2 * (2 * REFERENCE_FLANK + 1) + 1
        lines.append(
            f"warning: sites.flank {settings.flank} gives {features:,} features per candidate, "
            f"{features / reference:.0f}x those of flank {REFERENCE_FLANK}: the tree fits take roughly that "
            "many times as long; the time left is logged as the fits end"
        )
    return lines


class FitClock:
    """The tree fits' progress: work is training candidates (a fit's time grows with them), the
    time left at the rate since the first fit (progress.TimeLeft); a line where a fit ends at least
    LOG_EVERY_S after the last line, so slow fits (large flanks) show progress within a fold."""

    def __init__(self, total_rows: int, progress: Callable[[str], None], clock=time.monotonic):
        self.progress, self.clock = progress, clock
        self.left = TimeLeft(total_rows, clock())
        self.done, self.last_line = 0, clock()

    def fitted(self, rows: int, what: str) -> None:
        self.done += rows
        now = self.clock()
        self.left.record(now, self.done)
        if now - self.last_line >= LOG_EVERY_S:
            self.progress(f"{what} fitted on {rows:,} candidates; trees: {self.time_left()} left")
            self.last_line = now

    def time_left(self) -> str:
        return duration(self.left.seconds())

    def said(self) -> None:
        self.last_line = self.clock()


def training_rows(fold: np.ndarray, folds: list[int]) -> int:
    """Candidates every tree fit of predict_out_of_fold trains on, summed (FitClock's total)."""
    sizes = {f: int((fold == f).sum()) for f in folds}
    total = len(fold)
    inner = sum(total - sizes[t] - sizes[i] for t in folds for i in folds if i != t)
    return inner + sum(total - sizes[t] for t in folds)


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
    for line in tree_cost_lines(found, settings, len(folds)):
        progress(line)
    clock = FitClock(training_rows(fold, folds), progress)
    for test_fold in folds:
        began = time.perf_counter()
        training = items.fold != test_fold
        training_base = np.where(fold != test_fold, base, np.nan)  # no test-fold candidate counts
        tuned[BASE_TUNED][test_fold] = thresholds_by_type(items, items.scores(training_base), training)
        inner = inner_probabilities(found, test_fold, folds, settings, clock)
        tuned[TREE][test_fold] = thresholds_by_type(items, items.scores(inner), training)
        probability[fold == test_fold] = fit_and_predict(
            found, fold != test_fold, fold == test_fold, settings
        )
        clock.fitted(int((fold != test_fold).sum()), f"fold {test_fold} of {len(folds)}: outer tree")
        progress(
            f"fold {test_fold} of {len(folds)}: {int((fold == test_fold).sum()):,} test candidates, "
            f"{len(folds)} trees on {int((fold != test_fold).sum()):,} training candidates "
            f"in {time.perf_counter() - began:.1f} s; trees: {clock.time_left()} left"
        )
        clock.said()
    calls = {
        BASE_THRESHOLD: base >= settings.threshold,
        BASE_TUNED: base >= per_candidate(tuned[BASE_TUNED], fold, types),
        TREE: probability >= per_candidate(tuned[TREE], fold, types),
    }
    return OutOfFold(probability, tuned, calls)
