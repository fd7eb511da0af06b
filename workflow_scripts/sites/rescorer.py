"""A re-scorer fitted on one genome and applied unchanged to another (sites.transfer).

site_calls writes the re-scorer folder (results/sites/rescorer/, sites/rescorer_files.py) beside
its out-of-fold results: the profile tree fitted on all of this genome's candidates, and the
per-type thresholds of the base score and of the tree, each F1-best over all of this genome's
items (the tree's on its out-of-fold probabilities, as the out-of-fold threshold is chosen). With
`sites.transfer: <another genome's re-scorer folder>`, site_calls adds predictors that saw none
of this genome's annotation:

* `transfer_base_tuned`: the base score at the source genome's thresholds;
* `transfer_tree`: the source genome's tree at its own thresholds;
* `transfer_errorseq` (when the source ran sites.model): its fold models' mean probability at
  the thresholds of their out-of-fold probabilities there (sites/deep_transfer.py).

The tree travels as arrays (sites/tree_arrays.py), not as a scikit-learn object. Settings that
shape the tree's features (flank, floor, peak_radius, consensus_window) must match the source's.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from workflow_scripts.sites.candidates import Candidates
from workflow_scripts.sites.deep_transfer import DeepModels
from workflow_scripts.sites.items import Items
from workflow_scripts.sites.predictors import (
    BASE_TUNED,
    ERRORSEQ,
    TRANSFER_BASE_TUNED,
    TRANSFER_ERRORSEQ,
    TRANSFER_TREE,
    TREE,
    OutOfFold,
    new_tree,
    per_candidate,
    thresholds_by_type,
)
from workflow_scripts.sites.rescorer_manifest import FEATURE_SETTINGS
from workflow_scripts.sites.settings import SiteSettings
from workflow_scripts.sites.tree_arrays import TreeEnsemble


@dataclass(frozen=True)
class Rescorer:
    tree: TreeEnsemble | None  # None: the source's candidates were all of one class
    constant: float  # the tree's probability when `tree` is None
    thresholds: dict[str, dict[str, float]]  # base_tuned | tree (| errorseq) -> splice type -> threshold
    settings: dict  # FEATURE_SETTINGS of the source
    source: dict  # counts and inputs of the source genome
    deep: DeepModels | None = None  # sites.model's fold models, when the source ran it

    def probability(self, features: np.ndarray) -> np.ndarray:
        if len(features) == 0:
            return np.empty(0)
        if self.tree is None:
            return np.full(len(features), self.constant)
        return self.tree.probability(features)


def fit_rescorer(
    found: Candidates,
    items: Items,
    predictions: OutOfFold,
    settings: SiteSettings,
    source: dict,
    deep: DeepModels | None = None,
) -> Rescorer:
    labels = found.table["is_true_site"].to_numpy()
    everything = np.ones(len(items), bool)
    base = found.table["base_score"].to_numpy().astype(float)
    thresholds = {
        BASE_TUNED: thresholds_by_type(items, items.scores(base), everything),
        TREE: thresholds_by_type(items, items.scores(predictions.tree_probability), everything),
    }
    if deep is not None and predictions.errorseq_probability is not None:
        thresholds[ERRORSEQ] = thresholds_by_type(
            items, items.scores(predictions.errorseq_probability), everything
        )
    else:
        deep = None  # models without their out-of-fold thresholds cannot be applied as they were
    tree, constant = None, float(labels.mean()) if labels.size else 0.0
    if labels.size and labels.min() != labels.max():
        tree = TreeEnsemble.from_estimator(new_tree(settings.tree, settings.seed).fit(found.features, labels))
    chosen = {key: getattr(settings, key) for key in FEATURE_SETTINGS}
    return Rescorer(tree, constant, thresholds, chosen, source, deep)


def with_transfer(
    predictions: OutOfFold, found: Candidates, rescorer: Rescorer, deep_probability: np.ndarray | None = None
) -> OutOfFold:
    """`predictions` with the transfer predictors: the same thresholds in every fold
    (`deep_probability`: the source's deep models on these candidates, sites/deep_transfer.py)."""
    fold, types = found.table["fold"].to_numpy(), found.table["splice_type"].to_numpy()
    base = found.table["base_score"].to_numpy().astype(float)
    probability = rescorer.probability(found.features)
    scores = {TRANSFER_BASE_TUNED: (BASE_TUNED, base), TRANSFER_TREE: (TREE, probability)}
    if deep_probability is not None:
        scores[TRANSFER_ERRORSEQ] = (ERRORSEQ, deep_probability)
    thresholds = {
        name: {f: dict(rescorer.thresholds[source]) for f in set(fold.tolist())}
        for name, (source, _) in scores.items()
    }
    calls = {
        name: values >= per_candidate(thresholds[name], fold, types) for name, (_, values) in scores.items()
    }
    return replace(
        predictions,
        thresholds={**predictions.thresholds, **thresholds},
        calls={**predictions.calls, **calls},
        transfer_probability=probability,
        transfer_errorseq_probability=deep_probability,
    )
