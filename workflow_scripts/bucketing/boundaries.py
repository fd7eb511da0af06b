"""Bucket boundaries that minimise padding, and per-bucket batch sizes from a token budget.

A bucket (lo, hi] pads every member to ``hi`` tokens in the worst case, so the
padded-token cost of a set of boundaries is ``sum(count * upper) - sum(lengths)``.
`optimal_boundaries` finds the partition of the sorted distinct token lengths
into at most ``n_buckets`` contiguous groups that minimises that cost, exactly,
by dynamic programming (O(n_distinct² × n_buckets), vectorised over one axis).
More than `MAX_DISTINCT` distinct lengths are first merged into that many
equal-count groups of neighbouring lengths (each group keeps its largest length
as a possible boundary), which makes the result near-exact instead of exact.
"""

from __future__ import annotations

import numpy as np

MAX_DISTINCT = 2048


def length_groups(token_lengths: np.ndarray, max_groups: int = MAX_DISTINCT):
    """(upper length, count, length sum) per group of neighbouring distinct lengths."""
    values, counts = np.unique(np.asarray(token_lengths, dtype=np.int64), return_counts=True)
    sums = values * counts
    if len(values) <= max_groups:
        return values, counts, sums
    cumulative = np.cumsum(counts)
    group = np.minimum((cumulative - 1) * max_groups // cumulative[-1], max_groups - 1)
    ends = np.flatnonzero(np.diff(group, append=group[-1] + 1))  # last distinct value of each group
    starts = np.concatenate([[0], ends[:-1] + 1])
    return values[ends], np.add.reduceat(counts, starts), np.add.reduceat(sums, starts)


def padded_cost_by_bucket_count(
    token_lengths: np.ndarray, max_buckets: int
) -> tuple[np.ndarray, list[list[int]]]:
    """Least pad-to-upper cost for 1..max_buckets buckets, and the boundaries achieving each."""
    if len(token_lengths) == 0:
        raise ValueError("no token lengths to choose boundaries from")
    if max_buckets < 1:
        raise ValueError(f"need at least one bucket, got {max_buckets}")
    uppers, counts, sums = length_groups(token_lengths)
    m = len(uppers)
    n_before = np.concatenate([[0], np.cumsum(counts)]).astype(np.float64)
    sum_before = np.concatenate([[0], np.cumsum(sums)]).astype(np.float64)
    # cost[i, j]: one bucket holding groups i+1..j (after a bucket that ended at group i)
    i, j = np.arange(m)[:, None], np.arange(m)[None, :]
    cost = (n_before[j + 1] - n_before[i + 1]) * uppers[j] - (sum_before[j + 1] - sum_before[i + 1])
    cost[i >= j] = np.inf
    best = n_before[1:] * uppers - sum_before[1:]  # one bucket holding groups 0..j
    totals, choices = [best[-1]], []
    for _ in range(1, min(max_buckets, m)):
        candidates = best[:, None] + cost
        previous = candidates.argmin(axis=0)
        split = candidates[previous, np.arange(m)]
        previous[split >= best] = -1  # one bucket fewer is as good
        best = np.minimum(best, split)
        choices.append(previous)
        totals.append(best[-1])
    plans = [_backtrack(uppers, choices[: k - 1]) for k in range(1, len(totals) + 1)]
    return np.asarray(totals), plans


def _backtrack(uppers: np.ndarray, choices: list[np.ndarray]) -> list[int]:
    group, bounds = len(uppers) - 1, [int(uppers[-1])]
    for previous in reversed(choices):
        if previous[group] >= 0:
            group = int(previous[group])
            bounds.append(int(uppers[group]))
    return sorted(bounds)


def optimal_boundaries(
    token_lengths: np.ndarray, n_buckets: int, target_efficiency: float | None = None
) -> list[int]:
    """Inclusive upper edges minimising pad-to-upper tokens with at most n_buckets buckets.

    With `target_efficiency`, the fewest buckets (up to n_buckets) whose
    pad-to-upper efficiency reaches the target; n_buckets if none does.
    """
    totals, plans = padded_cost_by_bucket_count(token_lengths, n_buckets)
    if target_efficiency is not None:
        real = float(np.sum(token_lengths))
        efficiency = real / (real + totals)
        reached = np.flatnonzero(efficiency >= target_efficiency - 1e-12)
        if len(reached):
            return plans[int(reached[0])]
    return plans[-1]


def edge_efficiency(token_lengths: np.ndarray, boundaries: list[int]) -> float:
    """Real tokens / tokens if every window were padded to its bucket's upper edge."""
    token_lengths = np.asarray(token_lengths, dtype=np.int64)
    bucket = np.minimum(np.searchsorted(boundaries, token_lengths), len(boundaries) - 1)
    padded = np.maximum(np.asarray(boundaries)[bucket], token_lengths)
    return float(token_lengths.sum() / padded.sum())


def batch_sizes_for_budget(
    boundaries: list[int], max_tokens_per_batch: int, max_length: int, max_windows: int | None = None
) -> list[int]:
    """Per-bucket batch size: as many windows of the bucket's longest length as fit the budget,
    at most `max_windows`."""
    sizes = [max(1, max_tokens_per_batch // min(upper, max_length)) for upper in boundaries]
    return sizes if max_windows is None else [min(size, max_windows) for size in sizes]
