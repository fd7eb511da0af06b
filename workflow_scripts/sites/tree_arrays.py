"""The profile tree as plain arrays: a fitted HistGradientBoostingClassifier's trees, saved as an
.npz of numbers (read with allow_pickle=False) and evaluated here with numpy, so a re-scorer file
holds no code and needs no scikit-learn object to load.

A binary HistGradientBoostingClassifier predicts P(class 1) = expit(baseline + sum of its trees'
leaf values), the trees summed in order in float64. Each tree is a node table: an internal node
sends a sample left when its feature is <= the node's threshold, and a missing (NaN) feature the
way the node learnt (`missing_left`). The profile features are numeric (never categorical), and
`from_estimator` refuses a tree with a categorical split. Summing in scikit-learn's order gives
the same float64 bits as its predict_proba (tests/unit/test_rescorer_files.py checks it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from workflow_scripts.errors import InputError

# the node table, one row per node of every tree (tree t is rows tree_start[t]:tree_start[t+1])
NODE_ARRAYS = {
    "value": np.float64,  # a leaf's contribution to the raw score
    "feature": np.int64,  # an internal node's feature index
    "threshold": np.float64,  # ... and the value at or below which a sample goes left
    "missing_left": np.bool_,  # where a NaN feature goes
    "left": np.int64,  # children: row numbers within the tree
    "right": np.int64,
    "is_leaf": np.bool_,
}
ARRAYS = {**NODE_ARRAYS, "tree_start": np.int64, "baseline": np.float64}
ROWS_PER_BLOCK = 4096  # samples walked together: blocks x trees of int64 positions
# What a fitted tree can be (config/config.schema.yaml: sites.tree.max_leaf_nodes and max_iter have
# these maxima): a tree of L leaves has 2L - 1 nodes and a depth below L, so these bound the node
# table's size and each sample's walk (tests/unit/test_rescorer_validation.py checks the schema).
MAX_LEAVES = 1024
MAX_TREES = 10_000
MAX_NODES = MAX_TREES * (2 * MAX_LEAVES - 1)


@dataclass(frozen=True)
class TreeEnsemble:
    """A binary gradient-boosted tree ensemble on `n_features` numeric features."""

    arrays: dict[str, np.ndarray]  # ARRAYS: the node table, each tree's first row, the baseline
    n_features: int

    @property
    def n_trees(self) -> int:
        return len(self.arrays["tree_start"]) - 1

    @classmethod
    def from_estimator(cls, estimator) -> TreeEnsemble:
        """The arrays of a fitted binary HistGradientBoostingClassifier (numeric features only)."""
        if len(estimator.classes_) != 2 or estimator.n_trees_per_iteration_ != 1:
            raise ValueError("a binary classifier expected")
        nodes = [predictor.nodes for (predictor,) in estimator._predictors]
        if any(table["is_categorical"].any() for table in nodes):
            raise ValueError("a categorical split: the profile features are numeric")
        table = np.concatenate(nodes)
        arrays = {
            "value": table["value"],
            "feature": table["feature_idx"],
            "threshold": table["num_threshold"],
            "missing_left": table["missing_go_to_left"].astype(bool),
            "left": table["left"],
            "right": table["right"],
            "is_leaf": table["is_leaf"].astype(bool),
            "tree_start": np.cumsum([0] + [len(part) for part in nodes]),
            "baseline": np.asarray(estimator._baseline_prediction).reshape(1),
        }
        typed: dict[str, np.ndarray] = {
            name: np.ascontiguousarray(arrays[name], dtype=kind) for name, kind in ARRAYS.items()
        }
        return cls(typed, int(estimator.n_features_in_))

    def raw_score(self, features: np.ndarray) -> np.ndarray:
        """baseline + each tree's leaf value, added tree by tree in float64 (rows in blocks:
        every tree walked at once, a step down per level)."""
        x = np.asarray(features, dtype=np.float64)
        raw = np.full(len(x), self.arrays["baseline"][0])
        for begin in range(0, len(x), ROWS_PER_BLOCK):
            block = x[begin : begin + ROWS_PER_BLOCK]
            leaves = self.arrays["value"][self.leaf_rows(block)]
            for tree in range(self.n_trees):
                raw[begin : begin + len(block)] += leaves[:, tree]
        return raw

    def leaf_rows(self, x: np.ndarray) -> np.ndarray:
        """The node-table row of the leaf each sample reaches in each tree (samples x trees)."""
        a = self.arrays
        starts = a["tree_start"][:-1]
        at = np.broadcast_to(starts, (len(x), len(starts))).copy()
        sample = np.broadcast_to(np.arange(len(x))[:, None], at.shape)
        inside = ~a["is_leaf"][at]
        while inside.any():
            node = at[inside]
            values = x[sample[inside], a["feature"][node]]
            left = np.where(np.isnan(values), a["missing_left"][node], values <= a["threshold"][node])
            child = np.where(left, a["left"][node], a["right"][node])
            at[inside] = np.broadcast_to(starts, at.shape)[inside] + child
            inside = ~a["is_leaf"][at]
        return at

    def probability(self, features: np.ndarray) -> np.ndarray:
        """P(class 1) of each row of `features` (rows x n_features)."""
        if features.ndim != 2 or features.shape[1] != self.n_features:
            raise ValueError(f"{self.n_features} features expected, got shape {features.shape}")
        return expit(self.raw_score(features))


def check_headers(headers: dict[str, tuple[np.dtype, tuple[int, ...]]], trees: int, path: str) -> None:
    """The arrays' headers (file_headers.npz_headers), before any is read: the arrays of ARRAYS,
    each 1-D of its dtype, no longer than MAX_TREES trees of MAX_LEAVES leaves hold."""
    unknown, missing = set(headers) - set(ARRAYS), set(ARRAYS) - set(headers)
    if unknown or missing:
        raise InputError(
            path, ", ".join(sorted(unknown or missing)), "unknown array" if unknown else "missing array"
        )
    if trees > MAX_TREES:
        raise InputError(path, "tree_start", f"{trees:,} trees: a fitted tree has at most {MAX_TREES:,}")
    for name, kind in ARRAYS.items():
        dtype, shape = headers[name]
        if len(shape) != 1 or dtype != np.dtype(kind):
            raise InputError(path, name, f"want a 1-D {np.dtype(kind).name} array, found {dtype} {shape}")
        longest = {"tree_start": MAX_TREES + 1, "baseline": 1}.get(name, MAX_NODES)
        if shape[0] > longest:
            raise InputError(
                path,
                name,
                f"{shape[0]:,} values: more than {MAX_TREES:,} trees of {MAX_LEAVES:,} leaves can hold",
            )


def check_shape_of_trees(arrays: dict[str, np.ndarray], tree: np.ndarray, path: str) -> None:
    """Each tree a tree: every node but its root the child of exactly one node, and at most
    MAX_LEAVES leaves (so 2 * leaves - 1 nodes, and a walk of fewer than MAX_LEAVES steps)."""
    inner = ~arrays["is_leaf"]
    starts = arrays["tree_start"]
    children = np.concatenate([arrays["left"][inner], arrays["right"][inner]]) + np.tile(
        starts[tree[inner]], 2
    )
    parents = np.bincount(children, minlength=len(tree))
    roots = np.zeros(len(tree), bool)
    roots[starts[:-1]] = True
    if (parents[roots] != 0).any() or (parents[~roots] != 1).any():
        raise InputError(path, "left", "a node that is not the child of exactly one node: not a tree")
    leaves = np.bincount(tree[arrays["is_leaf"]], minlength=len(starts) - 1)
    if leaves.max(initial=0) > MAX_LEAVES:
        worst = int(leaves.argmax())
        raise InputError(
            path,
            "is_leaf",
            f"tree {worst} has {int(leaves[worst]):,} leaves: a fitted tree has at most {MAX_LEAVES:,} "
            "(sites.tree.max_leaf_nodes)",
        )


def checked_ensemble(arrays: dict[str, np.ndarray], n_features: int, path: str) -> TreeEnsemble:
    """A TreeEnsemble from arrays read from `path`, every array and node checked: each has its
    dtype and length, each tree's children lie after their node inside the tree (so a walk ends),
    each node but a root is the child of one node and a tree has at most MAX_LEAVES leaves (a
    bound on its depth and size: check_shape_of_trees), each feature index is below n_features,
    the leaves' values and the baseline are finite."""

    def refuse(name: str, why: str) -> InputError:
        return InputError(path, name, why)

    unknown, missing = set(arrays) - set(ARRAYS), set(ARRAYS) - set(arrays)
    if unknown or missing:
        raise refuse(", ".join(sorted(unknown or missing)), "unknown array" if unknown else "missing array")
    for name, kind in ARRAYS.items():
        if arrays[name].ndim != 1 or arrays[name].dtype != np.dtype(kind):
            raise refuse(
                name,
                f"want a 1-D {np.dtype(kind).name} array, found {arrays[name].dtype} {arrays[name].shape}",
            )
    nodes = len(arrays["value"])
    if any(len(arrays[name]) != nodes for name in NODE_ARRAYS):
        raise refuse("value", "the node arrays differ in length")
    starts, baseline = arrays["tree_start"], arrays["baseline"]
    if len(starts) < 2 or starts[0] != 0 or starts[-1] != nodes or (np.diff(starts) < 1).any():
        raise refuse("tree_start", f"not increasing from 0 to the {nodes} nodes")
    if len(baseline) != 1 or not np.isfinite(baseline).all():
        raise refuse("baseline", "want one finite number")
    tree = np.repeat(np.arange(len(starts) - 1), np.diff(starts))
    local = np.arange(nodes) - starts[tree]
    size = np.diff(starts)[tree]
    inner, leaf = ~arrays["is_leaf"], arrays["is_leaf"]
    for side in ("left", "right"):
        child = arrays[side][inner]
        if ((child <= local[inner]) | (child >= size[inner])).any():
            raise refuse(side, "a child outside its tree or before its node")
    check_shape_of_trees(arrays, tree, path)
    feature = arrays["feature"][inner]
    if ((feature < 0) | (feature >= n_features)).any():
        raise refuse("feature", f"a feature index outside 0..{n_features - 1}")
    if np.isnan(arrays["threshold"][inner]).any() or not np.isfinite(arrays["value"][leaf]).all():
        raise refuse("value", "a NaN threshold or a non-finite leaf value")
    return TreeEnsemble({name: arrays[name] for name in ARRAYS}, n_features)
