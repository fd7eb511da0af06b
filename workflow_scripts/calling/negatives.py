"""True negatives (TN) sampled from non-sites: `decoy` (the default) or `random`.

Candidates are scored positions with no annotated site and no predicted site of either splice
type within ±consensus_window (so a TN window never repeats a site's window), not drawn already
for the other type: positions the base model got right by predicting nothing. How many: `per_error` TN per FN of the same splice type.

* `random`: drawn uniformly from the candidates. Easy to tell from FN: almost every FN carries
  the canonical dinucleotide (GT for donors, AG for acceptors) and only ~1 in 16 random
  positions does, and FN scores sit well above those of random positions.
* `decoy`: only candidates that carry the canonical dinucleotide, each matched to one FN's score
  (nearest unused candidate score, FN visited in a seeded random order), so the TN score
  distribution follows the FN's and neither the dinucleotide nor the score separates FN from TN
  on its own: the error model has to look at the sequence around the site.

`ks_distance` (two-sample Kolmogorov–Smirnov statistic) reports how close the match came.
"""

from __future__ import annotations

import numpy as np

KINDS = ("decoy", "random")


def how_many(n_errors: int, per_error: float, rng: np.random.Generator) -> int:
    """per_error x n_errors, the fractional part rounded up with that probability."""
    wanted = per_error * n_errors
    whole = int(np.floor(wanted))
    return whole + int(rng.random() < wanted - whole)


def sample_random(n_candidates: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """Indices of `n` distinct candidates (all of them when there are fewer), sorted."""
    if n >= n_candidates:
        return np.arange(n_candidates)
    return np.sort(rng.choice(n_candidates, size=n, replace=False))


def target_scores(error_scores: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """`n` FN scores to match: each FN once per whole per_error, the rest drawn, in random order."""
    if len(error_scores) == 0 or n == 0:
        return np.empty(0, dtype=np.float64)
    repeats, rest = divmod(n, len(error_scores))
    extra = rng.choice(len(error_scores), size=rest, replace=False)
    targets = np.concatenate([np.tile(error_scores, repeats), error_scores[extra]]).astype(np.float64)
    return targets[rng.permutation(len(targets))]


def match_scores(candidate_scores: np.ndarray, targets: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """For each target, the unused candidate with the nearest score; indices into candidate_scores.

    Candidates are sorted by score (ties in random order). Two union-find pointer lists skip the
    used ones: `right[i]` leads to the first unused index >= i (size = none), `left[i + 1]` to
    the last unused index <= i (0 = none), so each match costs amortised near-constant time.
    """
    n = min(len(targets), len(candidate_scores))
    order = np.lexsort((rng.random(len(candidate_scores)), candidate_scores))
    values = candidate_scores[order].astype(np.float64)
    size = len(values)
    right, left = list(range(size + 1)), list(range(size + 1))
    starts = np.searchsorted(values, targets[:n]).tolist()
    chosen = np.empty(n, dtype=np.int64)
    for t, (target, at) in enumerate(zip(targets[:n].tolist(), starts)):
        up, down = find(right, at), find(left, at) - 1
        pick = nearest(values, target, down, up, size)
        chosen[t] = order[pick]
        right[pick] = pick + 1
        left[pick + 1] = pick
    return chosen


def find(pointers: list[int], i: int) -> int:
    """Follow pointers to a fixed point, compressing the path."""
    root = i
    while pointers[root] != root:
        root = pointers[root]
    while pointers[i] != root:
        pointers[i], i = root, pointers[i]
    return root


def nearest(values: np.ndarray, target: float, down: int, up: int, size: int) -> int:
    if up >= size:
        return down
    if down < 0:
        return up
    return down if target - values[down] <= values[up] - target else up


def ks_distance(a: np.ndarray, b: np.ndarray) -> float:
    """Largest gap between the two empirical CDFs (0 = same distribution); nan when one is empty."""
    if len(a) == 0 or len(b) == 0:
        return float("nan")
    a, b = np.sort(a), np.sort(b)
    grid = np.concatenate([a, b])
    gap = np.searchsorted(a, grid, side="right") / len(a) - np.searchsorted(b, grid, side="right") / len(b)
    return float(np.abs(gap).max())
