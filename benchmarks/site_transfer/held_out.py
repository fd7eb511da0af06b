"""The source genome's tree and thresholds refitted without some of its folds, so that a
transferred target gene is scored only by predictors that never saw its orthologs.

The unit left out is the source's fold (sites/folds.py: whole gene clusters), not the ortholog's
own cluster, for three reasons: the deep models exist only per fold (fold model f never trained on
fold f), so tree and deep models are held out alike; target genes fall into few groups (one per
set of folds their orthologs lie in), so few trees are fitted; and leaving out fold f alone gives
back exactly the source's own out-of-fold predictor of fold f (`SourceFits.fit({f})` is the tree
site_calls fitted for test fold f, with that fold's nested thresholds), which the tests check.

A fit without the folds S (`SourceFits.fit(S)`) is what site_calls fits for a test fold, with S
in its place:
* the tree is fitted on the candidates of the folds outside S;
* `base_tuned`'s threshold per splice type is F1-best on the items of the folds outside S;
* the tree's threshold per type is F1-best on those items scored by inner trees that saw neither
  S nor the item's own fold (nested cross-fitting, predictors.py).
S = {} is the re-scorer as shipped (rescorer.fit_rescorer: the tree on all candidates, thresholds
on all items). Trees are cached by the folds they leave out: the inner tree of S = {f} for fold g
is the tree of S = {f, g}, and serves both.

Leaving a fold out also leaves out a fifth of the training data. `equal_size_control` names, for
each S, another set of as many folds disjoint from S: a tree trained on as much data that did see
the orthologs, which tells the orthologs' share of a drop from the data's.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import polars as pl

from workflow_scripts.calling.contract import GENE_CLUSTER
from workflow_scripts.sites.candidates import Candidates
from workflow_scripts.sites.folds import with_clusters
from workflow_scripts.sites.items import Items
from workflow_scripts.sites.predictors import BASE_TUNED, TREE, new_tree, thresholds_by_type
from workflow_scripts.sites.settings import SiteSettings

Folds = frozenset[int]
NOTHING: Folds = frozenset()
# The tree's nested thresholds score each training fold by a tree fitted on the other training
# folds: with one fold left that inner tree has no data, so a fit needs two folds left.
FOLDS_LEFT_TO_FIT = 2


def can_hold_out(excluded: Folds, folds: list[int]) -> bool:
    """Whether a fit without the folds `excluded` leaves enough folds for its nested thresholds."""
    return len(set(folds) - excluded) >= FOLDS_LEFT_TO_FIT


def tree_probability(tree: object | None, constant: float, features: np.ndarray) -> np.ndarray:
    """P(true site) of each row of `features` (`constant` where there is no tree)."""
    if len(features) == 0:
        return np.empty(0)
    if tree is None:
        return np.full(len(features), constant)
    return tree.predict_proba(features)[:, 1]  # type: ignore[attr-defined]


@dataclass(frozen=True)
class SourceFit:
    """The source's tree and thresholds without the folds `excluded`."""

    excluded: Folds
    training: np.ndarray  # bool per source candidate: the rows the tree was fitted on
    tree: object | None  # None: the training rows were all of one class (or none)
    constant: float  # the probability when `tree` is None
    thresholds: dict[str, dict[str, float]]  # BASE_TUNED | TREE -> splice type -> threshold

    def probability(self, features: np.ndarray) -> np.ndarray:
        return tree_probability(self.tree, self.constant, features)


class SourceFits:
    """SourceFit of any set of source folds left out, each tree fitted once."""

    def __init__(
        self,
        found: Candidates,
        items: Items,
        settings: SiteSettings,
        progress: Callable[[str], None] = lambda line: None,
    ):
        self.found, self.items, self.settings, self.progress = found, items, settings, progress
        self.fold = found.table["fold"].to_numpy()
        self.labels = found.table["is_true_site"].to_numpy()
        self.folds: list[int] = sorted(set(self.fold.tolist()) | set(items.fold.tolist()))
        self.trees: dict[Folds, tuple[object | None, float]] = {}
        self.fits: dict[Folds, SourceFit] = {}

    def training(self, excluded: Folds) -> np.ndarray:
        return ~np.isin(self.fold, sorted(excluded))

    def tree(self, excluded: Folds) -> tuple[object | None, float]:
        """The tree fitted on the candidates outside `excluded` (None and the share of true
        candidates when they are all of one class)."""
        if excluded not in self.trees:
            began = time.perf_counter()
            training = self.training(excluded)
            labels = self.labels[training]
            if labels.size == 0 or labels.min() == labels.max():
                self.trees[excluded] = (None, float(labels.mean()) if labels.size else 0.0)
            else:
                fitted = new_tree(self.settings.tree, self.settings.seed).fit(
                    self.found.features[training], labels
                )
                self.trees[excluded] = (fitted, 0.0)
            self.progress(
                f"tree without source folds {sorted(excluded) or 'none'}: {int(training.sum()):,} "
                f"training candidates, {time.perf_counter() - began:.1f} s"
            )
        return self.trees[excluded]

    def probability(self, excluded: Folds, rows: np.ndarray) -> np.ndarray:
        """P(true site) of the source candidates `rows` from the tree without `excluded`."""
        return tree_probability(*self.tree(excluded), self.found.features[rows])

    def fit(self, excluded: Folds) -> SourceFit:
        """The tree and both thresholds without the folds `excluded` (module docstring)."""
        excluded = frozenset(excluded)
        if excluded and not can_hold_out(excluded, self.folds):
            raise ValueError(
                f"fewer than {FOLDS_LEFT_TO_FIT} source folds are left to fit on without folds {sorted(excluded)}"
            )
        if excluded not in self.fits:
            training_items = ~np.isin(self.items.fold, sorted(excluded))
            training = self.training(excluded)
            base = np.where(training, self.found.table["base_score"].to_numpy().astype(float), np.nan)
            inner = np.full(len(self.fold), np.nan)
            for inner_fold in self.folds:
                if inner_fold not in excluded:
                    rows = self.fold == inner_fold
                    inner[rows] = self.probability(excluded | {inner_fold}, rows)
            thresholds = {
                BASE_TUNED: thresholds_by_type(self.items, self.items.scores(base), training_items),
                TREE: thresholds_by_type(self.items, self.items.scores(inner), training_items),
            }
            tree, constant = self.tree(excluded)
            self.fits[excluded] = SourceFit(excluded, training, tree, constant, thresholds)
        return self.fits[excluded]


def source_gene_folds(found: Candidates, clusters: pl.DataFrame, genes: pl.DataFrame) -> dict[str, int]:
    """Each source gene's fold: its gene cluster's (a gene with no candidate and no scored site in
    its cluster was never trained on and has none)."""
    rows = pl.concat([found.table.select(GENE_CLUSTER, "fold"), found.sites.select(GENE_CLUSTER, "fold")])
    cluster_fold = rows.unique(GENE_CLUSTER)
    located = with_clusters(genes.select("gene_id"), clusters).join(
        cluster_fold, on=GENE_CLUSTER, how="inner"
    )
    return dict(zip(located["gene_id"].to_list(), located["fold"].to_list()))


def excluded_folds(pairs: pl.DataFrame, gene_fold: dict[str, int]) -> dict[str, Folds]:
    """Each target gene with an ortholog (pairs: target_gene, source_gene) -> the source folds its
    orthologs lie in (orthologs without a fold left aside)."""
    found: dict[str, set[int]] = {}
    for target, source in zip(pairs["target_gene"].to_list(), pairs["source_gene"].to_list()):
        found.setdefault(target, set())
        if source in gene_fold:
            found[target].add(gene_fold[source])
    return {target: frozenset(folds) for target, folds in found.items()}


def equal_size_control(excluded: Folds, folds: list[int]) -> Folds | None:
    """As many source folds as `excluded`, none of them in it (the folds shifted by the smallest
    step that clears them); None when no such set exists."""
    for step in range(1, len(folds)):
        shifted = frozenset(folds[(folds.index(f) + step) % len(folds)] for f in excluded)
        if shifted.isdisjoint(excluded):
            return shifted
    return None


@dataclass(frozen=True)
class TreeScheme:
    """One way of choosing the source predictors for each target candidate: its probability and
    both predictors' calls."""

    probability: np.ndarray
    base_calls: np.ndarray
    tree_calls: np.ndarray


def scheme_calls(
    fits: SourceFits, target: Candidates, chosen: list[Folds | None], progress=lambda line: None
) -> TreeScheme:
    """Each target candidate scored by the fit without its `chosen` folds (None: as shipped, the
    fit without none), at that fit's thresholds for its splice type."""
    n = target.table.height
    types = target.table["splice_type"].to_numpy()
    base = target.table["base_score"].to_numpy().astype(float)
    probability, base_cut, tree_cut = np.full(n, np.nan), np.full(n, np.inf), np.full(n, np.inf)
    groups: dict[Folds, list[int]] = {}
    for row, excluded in enumerate(chosen):
        groups.setdefault(NOTHING if excluded is None else excluded, []).append(row)
    for excluded, members in sorted(groups.items(), key=lambda group: sorted(group[0])):
        rows = np.array(members, dtype=np.int64)
        fit = fits.fit(excluded)
        probability[rows] = fit.probability(target.features[rows])
        for splice_type in set(types[rows].tolist()):
            typed = rows[types[rows] == splice_type]
            base_cut[typed] = fit.thresholds[BASE_TUNED][splice_type]
            tree_cut[typed] = fit.thresholds[TREE][splice_type]
        progress(f"{len(rows):,} target candidates scored without source folds {sorted(excluded) or 'none'}")
    return TreeScheme(probability, base >= base_cut, probability >= tree_cut)
