from itertools import combinations

import numpy as np
import pytest

from workflow_scripts.bucketing.boundaries import (
    batch_sizes_for_budget,
    edge_efficiency,
    length_groups,
    optimal_boundaries,
    padded_cost_by_bucket_count,
)


def padded_cost(lengths, boundaries):
    bucket = np.minimum(np.searchsorted(boundaries, lengths), len(boundaries) - 1)
    return int((np.asarray(boundaries)[bucket] - lengths).sum())


def brute_force_cost(lengths, k):
    values = np.unique(lengths)
    best = None
    for inner in combinations(values[:-1].tolist(), min(k, len(values)) - 1):
        cost = padded_cost(lengths, list(inner) + [int(values[-1])])
        best = cost if best is None else min(best, cost)
    return best


@pytest.mark.parametrize("seed", range(12))
def test_dynamic_programme_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(2, 60, int(rng.integers(1, 80)))
    max_buckets = 4
    totals, plans = padded_cost_by_bucket_count(lengths, max_buckets)
    for k, (total, plan) in enumerate(zip(totals, plans), start=1):
        assert len(plan) <= k and plan[-1] == lengths.max()
        assert padded_cost(lengths, plan) == total == brute_force_cost(lengths, k)
    assert list(totals) == sorted(totals, reverse=True)


def test_one_bucket_per_distinct_length_pads_nothing():
    lengths = np.array([5, 9, 9, 12, 5, 30])
    assert optimal_boundaries(lengths, 10) == [5, 9, 12, 30]
    assert edge_efficiency(lengths, [5, 9, 12, 30]) == 1.0
    assert optimal_boundaries(lengths, 1) == [30]


def test_target_efficiency_picks_fewest_buckets():
    lengths = np.array([10] * 50 + [11] * 50 + [100] * 10)
    assert optimal_boundaries(lengths, 3, target_efficiency=0.97) == [11, 100]  # 2050 / 2100
    assert optimal_boundaries(lengths, 3, target_efficiency=1.0) == [10, 11, 100]
    assert optimal_boundaries(lengths, 2, target_efficiency=1.0) == [11, 100]  # unreachable: n_buckets


def test_many_distinct_lengths_are_grouped_near_exactly():
    rng = np.random.default_rng(0)
    lengths = rng.integers(1, 20_000, 30_000)
    uppers, counts, sums = length_groups(lengths, max_groups=512)
    assert len(uppers) <= 512 and counts.sum() == len(lengths) and sums.sum() == lengths.sum()
    assert uppers[-1] == lengths.max() and (np.diff(uppers) > 0).all()
    plan = optimal_boundaries(lengths, 16)
    quantiles = np.quantile(lengths, np.linspace(0, 1, 17)[1:]).astype(int).tolist()
    assert len(plan) == 16 and plan[-1] == lengths.max()
    assert edge_efficiency(lengths, plan) >= edge_efficiency(lengths, quantiles) - 1e-3


def test_batch_sizes_follow_the_budget():
    assert batch_sizes_for_budget([100, 250, 1000], 1000, max_length=512) == [10, 4, 1]
    assert batch_sizes_for_budget([100, 2000], 50, max_length=4096) == [1, 1]  # never 0
    assert batch_sizes_for_budget([20, 100, 250], 1000, max_length=512, max_windows=8) == [8, 8, 4]


def test_no_lengths_rejected():
    with pytest.raises(ValueError):
        optimal_boundaries(np.array([], dtype=int), 3)
    with pytest.raises(ValueError):
        optimal_boundaries(np.array([3]), 0)
