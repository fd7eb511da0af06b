"""A re-scorer fitted on one genome and applied unchanged to another (sites.transfer).

site_calls writes rescorer.pkl beside its out-of-fold results: the profile tree fitted on all of
this genome's candidates, and the per-type thresholds of the base score and of the tree, each
F1-best over all of this genome's items (the tree's on its out-of-fold probabilities, as the
out-of-fold threshold is chosen). With `sites.transfer: <another genome's rescorer.pkl>`,
site_calls adds two predictors that saw none of this genome's annotation:

* `transfer_base_tuned`: the base score at the source genome's thresholds;
* `transfer_tree`: the source genome's tree at its own thresholds;
* `transfer_errorseq` (when the source ran sites.model): its fold models' mean probability at
  the thresholds of their out-of-fold probabilities there (sites/deep_transfer.py).

The file is a pickle (scikit-learn's trees have no other faithful format): load only files you
wrote, with the scikit-learn version that wrote them (a mismatch is refused). Settings that shape
the tree's features (flank, floor, peak_radius, consensus_window) must match the source's.
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import sklearn

from workflow_scripts.errors import InputError
from workflow_scripts.io_utils import atomic_path
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
from workflow_scripts.sites.settings import SiteSettings

FORMAT = "errorseq-site-rescorer/2"
FEATURE_SETTINGS = ("flank", "floor", "peak_radius", "consensus_window")


@dataclass(frozen=True)
class Rescorer:
    tree: object | None  # None: the source's candidates were all of one class
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
        return self.tree.predict_proba(features)[:, 1]  # type: ignore[attr-defined]


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
    tree, constant = None, float(labels.mean()) if labels.size else 0.0
    if labels.size and labels.min() != labels.max():
        tree = new_tree(settings.tree, settings.seed).fit(found.features, labels)
    chosen = {key: getattr(settings, key) for key in FEATURE_SETTINGS}
    return Rescorer(tree, constant, thresholds, chosen, source, deep)


def save_rescorer(rescorer: Rescorer, path: str) -> None:
    payload = {"format": FORMAT, "sklearn": sklearn.__version__, "rescorer": rescorer}
    with atomic_path(path) as tmp:
        tmp.write_bytes(pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL))


def load_rescorer(path: str, settings: SiteSettings) -> Rescorer:
    try:
        payload = pickle.loads(Path(path).read_bytes())
    except (pickle.UnpicklingError, EOFError, AttributeError, ImportError, IndexError) as error:
        raise InputError(path, "rescorer", f"not a site_calls rescorer.pkl ({error})") from None
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        found = payload.get("format") if isinstance(payload, dict) else None
        older = found if isinstance(found, str) and found.startswith(FORMAT.rsplit("/", 1)[0]) else None
        why = (
            f"written by an older errorseq ({older}): rerun site_calls on the source genome" if older else ""
        )
        raise InputError(path, "format", why or f"not a site_calls rescorer.pkl (want {FORMAT})")
    if payload["sklearn"] != sklearn.__version__:
        raise InputError(
            path,
            "sklearn",
            f"written with scikit-learn {payload['sklearn']}, this is {sklearn.__version__}: "
            "rerun site_calls on the source genome",
        )
    rescorer: Rescorer = payload["rescorer"]
    for key in FEATURE_SETTINGS:
        if rescorer.settings[key] != getattr(settings, key):
            raise InputError(
                path,
                key,
                f"the source genome used sites/calling {key} {rescorer.settings[key]}, this run "
                f"{getattr(settings, key)}: the tree's features would differ",
            )
    return rescorer


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
