from collections import Counter

import numpy as np
import pytest

from workflow_scripts.bucketing.sampler import DistributedBucketBatchSampler, padding_efficiency

# (bucket sizes, batch sizes): uneven buckets, tiny buckets, a bucket smaller than the ranks
LAYOUTS = [
    ([10, 37, 5], [4, 3, 2]),
    ([100, 1, 2, 64], [8, 8, 8, 8]),
    ([7], [16]),
    ([0, 13, 0, 29], [5, 4, 3, 2]),
]
WORLD_SIZES = [1, 2, 3]


def bucket_of_layout(bucket_sizes, seed=0):
    bucket_of = np.repeat(np.arange(len(bucket_sizes)), bucket_sizes)
    return np.random.default_rng(seed).permutation(bucket_of)


def samplers(bucket_of, batch_sizes, world, seed=7, epoch=0, shuffle=True):
    ranks = [
        DistributedBucketBatchSampler(bucket_of, batch_sizes, world, rank, seed, shuffle)
        for rank in range(world)
    ]
    for sampler in ranks:
        sampler.set_epoch(epoch)
    return ranks


def epoch_steps(bucket_of, batch_sizes, world, **kwargs):
    """steps[i][rank] = that rank's batch at step i."""
    per_rank = [list(sampler) for sampler in samplers(bucket_of, batch_sizes, world, **kwargs)]
    assert len({len(batches) for batches in per_rank}) == 1
    return list(zip(*per_rank))


def allowed_repeats(bucket_sizes, world):
    return sum(-size % world for size in bucket_sizes if size)


@pytest.mark.parametrize("world", WORLD_SIZES)
@pytest.mark.parametrize("bucket_sizes, batch_sizes", LAYOUTS)
def test_equal_steps_on_every_rank_matching_len(bucket_sizes, batch_sizes, world):
    bucket_of = bucket_of_layout(bucket_sizes)
    for epoch in range(3):
        ranks = samplers(bucket_of, batch_sizes, world, epoch=epoch)
        lengths = {len(sampler) for sampler in ranks} | {len(list(sampler)) for sampler in ranks}
        expected = sum(-(-n // (b * world)) for n, b in zip(bucket_sizes, batch_sizes))
        assert lengths == {expected}


@pytest.mark.parametrize("shuffle", [True, False])
@pytest.mark.parametrize("world", WORLD_SIZES)
@pytest.mark.parametrize("bucket_sizes, batch_sizes", LAYOUTS)
def test_every_step_one_bucket_same_size_within_batch_size(bucket_sizes, batch_sizes, world, shuffle):
    bucket_of = bucket_of_layout(bucket_sizes)
    for step in epoch_steps(bucket_of, batch_sizes, world, shuffle=shuffle):
        buckets = {int(bucket_of[i]) for batch in step for i in batch}
        assert len(buckets) == 1
        assert len({len(batch) for batch in step}) == 1
        assert 1 <= len(step[0]) <= batch_sizes[buckets.pop()]


@pytest.mark.parametrize("shuffle", [True, False])
@pytest.mark.parametrize("world", WORLD_SIZES)
@pytest.mark.parametrize("bucket_sizes, batch_sizes", LAYOUTS)
def test_full_coverage_and_only_documented_repeats(bucket_sizes, batch_sizes, world, shuffle):
    bucket_of = bucket_of_layout(bucket_sizes)
    steps = epoch_steps(bucket_of, batch_sizes, world, shuffle=shuffle)
    seen = Counter(i for step in steps for batch in step for i in batch)
    assert set(seen) == set(range(len(bucket_of)))
    assert sum(seen.values()) - len(bucket_of) == allowed_repeats(bucket_sizes, world)
    for bucket, size in enumerate(bucket_sizes):
        if size:
            counts = [seen[i] for i in np.flatnonzero(bucket_of == bucket)]
            assert max(counts) <= max(2, -(-world // size))


@pytest.mark.parametrize("shuffle", [True, False])
@pytest.mark.parametrize("world", [2, 3])
def test_repeats_only_in_last_global_batch_of_bucket(world, shuffle):
    bucket_of = bucket_of_layout([10, 37, 5])
    steps_of_bucket = {0: [], 1: [], 2: []}
    for step in epoch_steps(bucket_of, [4, 3, 2], world, shuffle=shuffle):
        steps_of_bucket[int(bucket_of[step[0][0]])].append([i for batch in step for i in batch])
    for steps in steps_of_bucket.values():
        assert any(is_duplicate_free(steps[:pos] + steps[pos + 1 :]) for pos in range(len(steps)))
        if len(steps) > 1:  # a bucket smaller than one global batch reuses its own samples
            assert all(is_duplicate_free([indices]) for indices in steps)


def is_duplicate_free(steps):
    indices = [i for indices in steps for i in indices]
    return len(set(indices)) == len(indices)


def test_single_replica_never_repeats():
    bucket_of = bucket_of_layout([10, 37, 5, 1])
    for shuffle in (True, False):
        indices = [
            i
            for batch in DistributedBucketBatchSampler(bucket_of, [4, 3, 2, 8], shuffle=shuffle)
            for i in batch
        ]
        assert sorted(indices) == list(range(len(bucket_of)))


def test_deterministic_per_seed_and_epoch():
    bucket_of = bucket_of_layout([50, 30, 20])
    first = epoch_steps(bucket_of, [4, 3, 2], 2, seed=3, epoch=5)
    again = epoch_steps(bucket_of, [4, 3, 2], 2, seed=3, epoch=5)
    assert first == again


def test_epochs_and_seeds_reshuffle():
    bucket_of = bucket_of_layout([50, 30, 20])
    base = epoch_steps(bucket_of, [4, 3, 2], 2, seed=3, epoch=0)
    assert epoch_steps(bucket_of, [4, 3, 2], 2, seed=3, epoch=1) != base
    assert epoch_steps(bucket_of, [4, 3, 2], 2, seed=4, epoch=0) != base


def test_bucket_order_is_mixed_across_steps():
    bucket_of = bucket_of_layout([40, 40, 40])
    step_buckets = [int(bucket_of[step[0][0]]) for step in epoch_steps(bucket_of, [4, 4, 4], 1)]
    assert step_buckets != sorted(step_buckets)


def test_unshuffled_order_is_fixed_and_ascending():
    bucket_of = np.array([1, 0, 1, 0, 0, 1, 1])
    for epoch in range(2):
        batches = [
            batch
            for step in epoch_steps(bucket_of, {0: 2, 1: 3}, 1, epoch=epoch, shuffle=False)
            for batch in step
        ]
        assert batches == [[1, 3], [4], [0, 2, 5], [6]]


def test_dict_batch_sizes_and_sparse_bucket_ids():
    bucket_of = np.array([5, 5, 9, 9, 9])
    sampler = DistributedBucketBatchSampler(bucket_of, {5: 2, 9: 2}, shuffle=False)
    assert list(sampler) == [[0, 1], [2, 3], [4]]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"batch_size_of_bucket": [2]},
        {"batch_size_of_bucket": [2, 0]},
        {"num_replicas": 2, "rank": 2},
        {"num_replicas": 0, "rank": 0},
        {"bucket_of": np.array([0.5, 1.0])},
        {"bucket_of": np.array([-1, 0])},
    ],
)
def test_bad_arguments_rejected(kwargs):
    arguments = {"bucket_of": np.array([0, 1]), "batch_size_of_bucket": [2, 2]} | kwargs
    with pytest.raises(ValueError):
        DistributedBucketBatchSampler(**arguments)


def test_padding_efficiency_by_hand():
    token_lengths = np.array([10, 6, 4, 4])
    # batch [0, 1]: 16 real of 20; batch [2, 3]: 8 real of 8 -> 24 / 28
    assert padding_efficiency(token_lengths, [[0, 1], [2, 3]]) == pytest.approx(24 / 28)
    assert padding_efficiency(token_lengths, [np.array([0, 1, 2, 3])]) == pytest.approx(24 / 40)
    with pytest.raises(ValueError):
        padding_efficiency(token_lengths, [])


# ---- length-sorted windows (token_lengths given), as the trainer uses the sampler ----------


def sorted_samplers(bucket_of, batch_sizes, world, lengths, seed=7, epoch=0, sort_window=4):
    ranks = [
        DistributedBucketBatchSampler(
            bucket_of, batch_sizes, world, rank, seed, token_lengths=lengths, sort_window=sort_window
        )
        for rank in range(world)
    ]
    for sampler in ranks:
        sampler.set_epoch(epoch)
    return [list(sampler) for sampler in ranks]


@pytest.mark.parametrize("world", WORLD_SIZES)
@pytest.mark.parametrize("bucket_sizes, batch_sizes", LAYOUTS)
def test_sorted_mode_keeps_every_sampler_property(bucket_sizes, batch_sizes, world):
    bucket_of = bucket_of_layout(bucket_sizes)
    lengths = np.random.default_rng(1).integers(10, 500, len(bucket_of))
    per_rank = sorted_samplers(bucket_of, batch_sizes, world, lengths)
    expected_steps = sum(-(-n // (b * world)) for n, b in zip(bucket_sizes, batch_sizes))
    assert {len(batches) for batches in per_rank} == {expected_steps}
    steps = list(zip(*per_rank))
    for step in steps:
        assert len({int(bucket_of[i]) for batch in step for i in batch}) == 1
        assert len({len(batch) for batch in step}) == 1
    seen = Counter(i for step in steps for batch in step for i in batch)
    assert set(seen) == set(range(len(bucket_of)))
    assert sum(seen.values()) - len(bucket_of) == allowed_repeats(bucket_sizes, world)
    assert per_rank == sorted_samplers(bucket_of, batch_sizes, world, lengths)  # deterministic
    assert per_rank != sorted_samplers(bucket_of, batch_sizes, world, lengths, epoch=1) or len(bucket_of) < 20


def test_sorted_windows_group_similar_lengths_and_still_shuffle():
    rng = np.random.default_rng(0)
    lengths = rng.integers(100, 1000, 4096)
    bucket_of = np.zeros(len(lengths), dtype=int)
    random = padding_efficiency(lengths, DistributedBucketBatchSampler(bucket_of, [32], seed=1))
    sorted_ = DistributedBucketBatchSampler(bucket_of, [32], seed=1, token_lengths=lengths, sort_window=16)
    assert padding_efficiency(lengths, sorted_) > 0.94 > 0.75 > random  # one wide bucket
    first = [sorted(batch) for batch in sorted_]
    sorted_.set_epoch(1)
    assert {tuple(b) for b in first}.isdisjoint({tuple(sorted(batch)) for batch in sorted_})
    steps = [int(lengths[batch].max()) for batch in first]
    assert steps != sorted(steps)  # batches are not in length order


def test_bad_token_lengths_rejected():
    with pytest.raises(ValueError):
        DistributedBucketBatchSampler(np.array([0, 1]), [2, 2], token_lengths=np.array([3]))
    with pytest.raises(ValueError):
        DistributedBucketBatchSampler(np.array([0, 1]), [2, 2], token_lengths=np.array([3, 4]), sort_window=0)
