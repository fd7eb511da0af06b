"""Batching of the three peers (benchmarks/peers/compare.py), the token accounting, and the
settings that match each peer's optimizer steps to errorseq's.

- errorseq: its own DistributedBucketBatchSampler, replayed here exactly (same buckets, batch
  sizes, seed and epoch as the train rule) to count the tokens it pads.
- the MetaSpliceAI recipe (shared/seeds/000): length buckets with inclusive upper bounds
  256/512/768 tokens, 2/1/1 windows per batch, every batch padded to its bucket's bound.
  `RecipeBatchSampler` + `BucketPadCollator` run it inside the Hugging Face Trainer.
- the Trainer's `group_by_length` batching is transformers' own LengthGroupedSampler and
  DataCollatorWithPadding (benchmarks/peers/trainer.py); only its batch size is chosen here.

Nothing here imports transformers: the fast test checks it without the Trainer.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from workflow_scripts.bucketing.sampler import DistributedBucketBatchSampler
from workflow_scripts.training.batches import load_split

RECIPE_BOUNDS = (256, 512, 768)  # tokens, inclusive upper edges (`--bucket_boundaries 256,512,768`)
RECIPE_BATCH_SIZES = (2, 1, 1)  # windows per batch and rank (`--batch_sizes 2,1,1`)
MAX_TOKENS = RECIPE_BOUNDS[-1]  # every window is cut to fit the recipe's largest bucket


@dataclass(frozen=True)
class TokenCount:
    """Real (attended) and padded tokens and windows of a set of micro-batches."""

    real: int
    padded: int
    windows: int
    batches: int

    @property
    def efficiency(self) -> float:
        return self.real / self.padded if self.padded else 0.0


def count_tokens(batches: Sequence[Sequence[int]], lengths: np.ndarray, widths: Sequence[int]) -> TokenCount:
    """Tokens of `batches` (indices into `lengths`), the i-th padded to `widths[i]` tokens."""
    real = padded = windows = 0
    for indices, width in zip(batches, widths, strict=True):
        batch_lengths = lengths[np.asarray(indices, dtype=np.int64)]
        if batch_lengths.max(initial=0) > width:
            raise ValueError(f"a batch of {batch_lengths.max()} tokens cannot be padded to {width}")
        real += int(batch_lengths.sum())
        padded += width * len(indices)
        windows += len(indices)
    return TokenCount(real, padded, windows, len(batches))


# ---- errorseq ---------------------------------------------------------------------------------
def errorseq_batches(
    buckets: np.ndarray,
    batch_sizes: Sequence[int],
    token_lengths: np.ndarray,
    world_size: int,
    seed: int,
    epoch: int,
) -> list[list[list[int]]]:
    """One epoch of the train rule's batches as it draws them: per step, one index list per rank."""
    per_rank = []
    for rank in range(world_size):
        sampler = DistributedBucketBatchSampler(
            buckets, list(batch_sizes), world_size, rank, seed, token_lengths=token_lengths
        )
        sampler.set_epoch(epoch)
        per_rank.append(list(sampler))
    return [list(step) for step in zip(*per_rank, strict=True)]


def errorseq_tokens(steps: list[list[list[int]]], token_lengths: np.ndarray, max_length: int) -> TokenCount:
    """errorseq pads each batch to its longest window, cut to bucket.max_length (BatchCollator)."""
    lengths = np.minimum(token_lengths, max_length)
    batches = [batch for step in steps for batch in step]
    return count_tokens(batches, lengths, [int(lengths[batch].max()) for batch in batches])


# ---- the MetaSpliceAI recipe ------------------------------------------------------------------
def recipe_bucket(length: int, bounds: Sequence[int] = RECIPE_BOUNDS) -> int:
    """Index of the first bound that holds `length` (windows above the last are cut to it)."""
    for index, bound in enumerate(bounds):
        if length <= bound:
            return index
    return len(bounds) - 1


class RecipeBatchSampler(torch.utils.data.Sampler):
    """The recipe's batches over the whole data set: each bucket shuffled and cut into batches of
    its batch size, then all batches shuffled (seed, epoch). Accelerate (inside the Trainer)
    deals them out to the ranks in turn, as a distributed sampler would."""

    def __init__(
        self,
        lengths: Sequence[int],
        seed: int,
        bounds: Sequence[int] = RECIPE_BOUNDS,
        batch_sizes: Sequence[int] = RECIPE_BATCH_SIZES,
    ):
        if len(bounds) != len(batch_sizes):
            raise ValueError(f"{len(bounds)} bucket bounds but {len(batch_sizes)} batch sizes")
        self.bounds, self.batch_sizes, self.seed, self.epoch = tuple(bounds), tuple(batch_sizes), seed, 0
        bucket_of = np.array([recipe_bucket(int(n), bounds) for n in lengths], dtype=np.int64)
        self.members = [np.flatnonzero(bucket_of == b) for b in range(len(bounds))]

    def set_epoch(self, epoch: int) -> None:
        self.epoch = int(epoch)

    def __len__(self) -> int:
        return sum(math.ceil(len(m) / size) for m, size in zip(self.members, self.batch_sizes))

    def batches(self) -> list[list[int]]:
        rng = np.random.default_rng((self.seed, self.epoch))
        batches = []
        for members, size in zip(self.members, self.batch_sizes):
            order = rng.permutation(members)
            batches += [order[i : i + size].tolist() for i in range(0, len(order), size)]
        return [batches[i] for i in rng.permutation(len(batches))]

    def __iter__(self) -> Iterator[list[int]]:
        return iter(self.batches())


class BucketPadCollator:
    """Pads every batch to the bound of the bucket of its longest window (the recipe's padding)."""

    def __init__(self, pad_id: int, bounds: Sequence[int] = RECIPE_BOUNDS):
        self.pad_id, self.bounds = pad_id, tuple(bounds)

    def width(self, longest: int) -> int:
        return self.bounds[recipe_bucket(longest, self.bounds)]

    def __call__(self, features: list[dict]) -> dict[str, torch.Tensor]:
        rows = [list(f["input_ids"])[: self.bounds[-1]] for f in features]
        width = self.width(max(len(row) for row in rows))
        ids = torch.full((len(rows), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for i, row in enumerate(rows):
            ids[i, : len(row)] = torch.as_tensor(row, dtype=torch.long)
            mask[i, : len(row)] = 1
        labels = torch.as_tensor([int(f["labels"]) for f in features], dtype=torch.long)
        return {"input_ids": ids, "attention_mask": mask, "labels": labels}


def recipe_tokens(lengths: np.ndarray, seed: int, epoch: int = 0) -> TokenCount:
    """The tokens of one recipe epoch (all ranks): batches padded to their bucket's bound."""
    sampler = RecipeBatchSampler(lengths, seed)
    sampler.set_epoch(epoch)
    collator = BucketPadCollator(0)
    batches = sampler.batches()
    clipped = np.minimum(lengths, RECIPE_BOUNDS[-1])
    return count_tokens(batches, clipped, [collator.width(int(clipped[b].max())) for b in batches])


# ---- matching the peers to errorseq ------------------------------------------------------------
def group_by_length_batch_size(real_per_step: float, world_size: int, mean_length: float) -> int:
    """Windows per rank that carry errorseq's mean real tokens per optimizer step (no accumulation)."""
    return max(1, round(real_per_step / (world_size * mean_length)))


def recipe_accumulation(real_per_step: float, world_size: int, real_per_micro_batch: float) -> int:
    """Gradient accumulation steps at which the recipe's 2/1/1 micro-batches carry errorseq's
    mean real tokens per optimizer step."""
    return max(1, round(real_per_step / (world_size * real_per_micro_batch)))


def plans(data: dict, ranks: int, seed: int, epochs: int) -> dict:
    """errorseq's steps and mean real tokens per step on a bucketed data set (inputs.bucket), and
    the peers' settings that match them."""
    summary = json.loads(Path(data["summary"]).read_text())
    train = load_split(data["windows"], data["manifest"], "train")
    steps = errorseq_batches(train.buckets, summary["batch_sizes"], train.token_lengths, ranks, seed, 0)
    real_per_step = errorseq_tokens(steps, train.token_lengths, MAX_TOKENS).real / len(steps)
    recipe = recipe_tokens(train.token_lengths, seed)
    common = {"steps": len(steps) * epochs, "eval_every": len(steps)}
    return {
        "errorseq": {"batch_sizes": summary["batch_sizes"], "real_per_step": real_per_step},
        "trainer": {
            **common,
            "batching": "group_by_length",
            "batch_size": group_by_length_batch_size(real_per_step, ranks, train.token_lengths.mean()),
            "accumulation": 1,
        },
        "recipe": {
            **common,
            "batching": "recipe",
            "batch_size": 1,  # unused: the recipe's sampler sets 2/1/1
            "accumulation": recipe_accumulation(real_per_step, ranks, recipe.real / recipe.batches),
        },
        "n_train": len(train),
    }
