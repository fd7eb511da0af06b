"""Distributed batch sampler that keeps every step's batches inside one length bucket."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence

import numpy as np

GlobalBatch = list[np.ndarray]  # one index array per rank, all from the same bucket
DEFAULT_SORT_WINDOW = 32  # global batches sorted together by length (benchmarks/padding.py)


class DistributedBucketBatchSampler:
    """Yield this rank's batches; at every step all ranks draw from the same bucket.

    Per epoch, each bucket's samples are (optionally) shuffled and cut into global
    batches of ``batch_size * num_replicas`` samples; each global batch is split
    into equal per-rank slices. Global batches from all buckets are then shuffled
    together, so every rank takes the same number of steps and, at each step,
    every rank holds a batch from the same bucket.

    Padding rule: a bucket's last global batch is cut down to the smallest
    multiple of ``num_replicas`` that holds its remaining samples, then filled up
    to that size by reusing samples of the same bucket, taken from the start of
    that bucket's epoch order. So each bucket repeats at most ``num_replicas - 1``
    samples per epoch (none when ``num_replicas == 1``); only a bucket with fewer
    samples than ranks repeats a sample more than once. The last batch of a bucket
    may therefore be smaller than ``batch_size``, but at any step all ranks' batches
    have the same size. Every sample appears at least once per epoch across ranks.

    Length sorting (``token_lengths`` given): after the shuffle, each bucket's
    order is cut into windows of ``sort_window`` global batches and every window
    is sorted by token length before being cut into batches (the "mega-batch"
    scheme of HF Trainer's ``group_by_length``, but inside a bucket). Batches
    then hold windows of near-equal length while their composition still changes
    every epoch; which batches exist and the order of steps stay random.
    ``sort_window=1`` sorts within each global batch only.

    With ``shuffle=False`` (evaluation) the order is fixed: buckets in ascending
    order, samples in index order (by length within sort windows when lengths
    are given); the padding rule is the same, so a single replica sees every
    sample exactly once. With several replicas, callers must drop repeated
    indices (e.g. de-duplicate gathered predictions by index).
    """

    def __init__(
        self,
        bucket_of: np.ndarray,
        batch_size_of_bucket: Mapping[int, int] | Sequence[int],
        num_replicas: int = 1,
        rank: int = 0,
        seed: int = 0,
        shuffle: bool = True,
        token_lengths: np.ndarray | None = None,
        sort_window: int = DEFAULT_SORT_WINDOW,
    ):
        self.bucket_of = _validated_bucket_of(bucket_of)
        self.buckets = [int(b) for b in np.unique(self.bucket_of)]
        self.batch_size_of_bucket = _validated_batch_sizes(batch_size_of_bucket, self.buckets)
        if num_replicas < 1 or not 0 <= rank < num_replicas:
            raise ValueError(
                f"need num_replicas >= 1 and 0 <= rank < num_replicas, got {num_replicas}, {rank}"
            )
        if seed < 0:
            raise ValueError(f"seed must be non-negative, got {seed}")
        self.num_replicas = int(num_replicas)
        self.rank = int(rank)
        self.seed = int(seed)
        self.shuffle = shuffle
        self.token_lengths = _validated_lengths(token_lengths, len(self.bucket_of))
        if sort_window < 1:
            raise ValueError(f"sort_window must be >= 1, got {sort_window}")
        self.sort_window = int(sort_window)
        self.epoch = 0
        self._members = {b: np.flatnonzero(self.bucket_of == b) for b in self.buckets}

    def set_epoch(self, epoch: int) -> None:
        self.epoch = int(epoch)

    def __len__(self) -> int:
        return sum(self._steps_in_bucket(b) for b in self.buckets)

    def __iter__(self) -> Iterator[list[int]]:
        for global_batch in self.global_batches():
            yield global_batch[self.rank].tolist()

    def _steps_in_bucket(self, bucket: int) -> int:
        global_size = self.batch_size_of_bucket[bucket] * self.num_replicas
        return -(-len(self._members[bucket]) // global_size)

    def global_batches(self) -> list[GlobalBatch]:
        """This epoch's steps in order; each step is one index array per rank."""
        batches = [batch for b in self.buckets for batch in self._bucket_global_batches(b)]
        if self.shuffle:
            order = np.random.default_rng((self.seed, self.epoch)).permutation(len(batches))
            batches = [batches[i] for i in order]
        return batches

    def _bucket_global_batches(self, bucket: int) -> list[GlobalBatch]:
        members = self._members[bucket]
        if self.shuffle:
            members = np.random.default_rng((self.seed, self.epoch, bucket)).permutation(members)
        global_size = self.batch_size_of_bucket[bucket] * self.num_replicas
        if self.token_lengths is not None:
            members = _sorted_within_windows(members, self.token_lengths, global_size * self.sort_window)
        batches = []
        for start in range(0, len(members), global_size):
            chunk = members[start : start + global_size]
            if len(chunk) % self.num_replicas:
                chunk = _fill_to_multiple(chunk, members, self.num_replicas)
            batches.append(np.split(chunk, self.num_replicas))
        return batches


def _sorted_within_windows(members: np.ndarray, token_lengths: np.ndarray, window: int) -> np.ndarray:
    """Sort each run of `window` consecutive members by token length (stable)."""
    lengths = token_lengths[members]
    window_of = np.arange(len(members)) // window
    return members[np.lexsort((lengths, window_of))]


def _validated_lengths(token_lengths: np.ndarray | None, size: int) -> np.ndarray | None:
    if token_lengths is None:
        return None
    token_lengths = np.asarray(token_lengths)
    if token_lengths.shape != (size,):
        raise ValueError(
            f"token_lengths must have one entry per sample ({size}), got shape {token_lengths.shape}"
        )
    return token_lengths.astype(np.int64)


def _fill_to_multiple(chunk: np.ndarray, members: np.ndarray, multiple: int) -> np.ndarray:
    """Append samples from the start of `members` (cycling) until len is a multiple."""
    missing = -len(chunk) % multiple
    return np.concatenate([chunk, np.resize(members, missing)])


def _validated_bucket_of(bucket_of: np.ndarray) -> np.ndarray:
    bucket_of = np.asarray(bucket_of)
    if bucket_of.ndim != 1 or (bucket_of.size and not np.issubdtype(bucket_of.dtype, np.integer)):
        raise ValueError("bucket_of must be a 1-D integer array")
    if (bucket_of < 0).any():
        raise ValueError("bucket indices must be non-negative")
    return bucket_of.astype(np.int64)


def _validated_batch_sizes(sizes: Mapping[int, int] | Sequence[int], buckets: list[int]) -> dict[int, int]:
    as_dict = dict(sizes) if isinstance(sizes, Mapping) else dict(enumerate(sizes))
    for bucket in buckets:
        if bucket not in as_dict:
            raise ValueError(f"no batch size for bucket {bucket}")
        if int(as_dict[bucket]) < 1:
            raise ValueError(f"batch size of bucket {bucket} must be >= 1, got {as_dict[bucket]}")
    return {int(b): int(size) for b, size in as_dict.items()}


def padding_efficiency(token_lengths: np.ndarray, batches: Iterable[Sequence[int] | np.ndarray]) -> float:
    """Real tokens / tokens computed when each batch is padded to its longest sequence."""
    token_lengths = np.asarray(token_lengths)
    real = padded = 0
    for batch in batches:
        lengths = token_lengths[np.asarray(batch, dtype=np.int64)]
        if lengths.size:
            real += int(lengths.sum())
            padded += int(lengths.size * lengths.max())
    if padded == 0:
        raise ValueError("no tokens in the given batches")
    return real / padded
