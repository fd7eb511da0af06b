"""base_data's blocks (BASE_DATA_CONTRACT: blocks.parquet, sequence.npy, labels.npy, manifest.json)
as training batches for a network of context C ≤ the data's context.

Each block is cropped by (context − C)/2 at each end, so the network sees C/2 nt of real flank on
each side of the labelled core and its output covers the core exactly. Batches group blocks of
similar length under a token budget (input nt per micro-batch and rank, padding included, at
least one block): sorted by length, cut greedily (train_base.batch_mixing > 0: re-cut each epoch in
a jittered length order, mixed_batches). With train_base.packing a batch is one row of its blocks
joined end to end (`Blocks.packed`, no padding: the network cuts every unit's output at each
block's ends), and the budget counts their lengths. Each epoch shuffles the batches (seeded by the
run's seed and the epoch) and deals them to the ranks in turn, so optimizer step k on W ranks with
accumulation A reads micro-batches k·W·A … (k+1)·W·A − 1 of that order whatever W and A are (one
rank with A = 2 reads what two ranks with A = 1 read). Padding (unpacked batches) is N (all-zero
one-hot) with label −1; the loss counts labelled positions only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl
import torch

from workflow_scripts.errors import InputError

BLOCK_COLUMNS = ("block", "split", "length", "offset")
IGNORE = -1


@dataclass(frozen=True)
class BaseDataFiles:
    blocks: str
    sequence: str
    labels: str
    manifest: str


@dataclass
class Blocks:
    """One split's blocks, cropped for the network's context."""

    sequence: np.ndarray  # uint8 codes A0 C1 G2 T3 N4, flat (memory-mapped)
    labels: np.ndarray  # int8, flat
    starts: np.ndarray  # first input position of each block (cropped)
    lengths: np.ndarray  # input length of each block (cropped)
    context: int  # the network's
    blank_flanks: frozenset[int] = frozenset()  # blocks whose flanks read N (train_base.flank_n)

    def __len__(self) -> int:
        return len(self.starts)

    def core_labels(self, index: int) -> np.ndarray:
        half = self.context // 2
        start = int(self.starts[index]) + half
        return self.labels[start : start + int(self.lengths[index]) - self.context]

    def codes(self, index: int) -> np.ndarray:
        """The block's input codes; N in its flanks if it is one of `blank_flanks`."""
        start, length = int(self.starts[index]), int(self.lengths[index])
        codes = self.sequence[start : start + length]
        if index not in self.blank_flanks:
            return codes
        half = self.context // 2
        codes = codes.copy()
        codes[:half], codes[length - half :] = 4, 4
        return codes

    def batch(self, indices: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
        """(one-hot input (B, 4, L), labels (B, L − context)), padded to the longest block."""
        longest = int(self.lengths[indices].max())
        codes = np.full((len(indices), longest), 4, dtype=np.uint8)
        labels = np.full((len(indices), longest - self.context), IGNORE, dtype=np.int64)
        for row, index in enumerate(indices):
            length = int(self.lengths[index])
            codes[row, :length] = self.codes(index)
            labels[row, : length - self.context] = self.core_labels(index)
        return one_hot(codes), torch.from_numpy(labels)

    def packed(self, indices: list[int]) -> tuple[torch.Tensor, torch.Tensor, tuple[int, ...]]:
        """The blocks joined end to end: (one-hot input (1, 4, Σ L), their cores' labels joined
        (1, Σ (L − context)), the lengths L) for BaseNetwork.forward(x, lengths)."""
        spans = tuple(int(self.lengths[index]) for index in indices)
        codes = np.concatenate([self.codes(index) for index in indices])
        labels = np.concatenate([self.core_labels(index) for index in indices]).astype(np.int64)
        return one_hot(codes[None, :]), torch.from_numpy(labels)[None, :], spans


def one_hot(codes: np.ndarray) -> torch.Tensor:
    """uint8 codes (B, L), A0 C1 G2 T3 N4, as (B, 4, L) float; N is all zero."""
    encoded = torch.zeros(codes.shape[0], 5, codes.shape[1])
    encoded.scatter_(1, torch.from_numpy(codes.astype(np.int64))[:, None, :], 1.0)
    return encoded[:, :4]


def read_manifest(files: BaseDataFiles) -> dict:
    try:
        manifest = json.loads(Path(files.manifest).read_text())
    except (OSError, json.JSONDecodeError) as error:
        raise InputError(files.manifest, "file", f"not base_data's manifest.json ({error})") from None
    for key in ("format", "context"):
        if key not in manifest:
            raise InputError(files.manifest, key, "missing: not base_data's manifest.json")
    if manifest["format"] != 1:
        raise InputError(files.manifest, "format", f"{manifest['format']!r}; this trainer reads format 1")
    return manifest


def load_blocks(files: BaseDataFiles, split: str, context: int) -> Blocks:
    """The blocks of `split`, cropped for a network of `context` (≤ the data's)."""
    data_context = int(read_manifest(files)["context"])
    if context > data_context or (data_context - context) % 2:
        raise InputError(
            files.manifest,
            "context",
            f"the data carry {data_context} nt of context; a {context}-nt model needs more",
        )
    table = pl.read_parquet(files.blocks)
    missing = [column for column in BLOCK_COLUMNS if column not in table.columns]
    if missing:
        raise InputError(files.blocks, missing[0], "column missing (base_data's blocks.parquet)")
    table = table.filter(pl.col("split") == split).sort("block")
    sequence = np.load(files.sequence, mmap_mode="r")
    labels = np.load(files.labels, mmap_mode="r")
    if sequence.dtype != np.uint8 or labels.dtype != np.int8 or sequence.shape != labels.shape:
        raise InputError(
            files.sequence, "dtype", "sequence.npy uint8 and labels.npy int8 of one length expected"
        )
    crop = (data_context - context) // 2
    offsets = table["offset"].to_numpy().astype(np.int64)
    lengths = table["length"].to_numpy().astype(np.int64)
    if len(lengths) and ((lengths - 2 * crop) <= context).any():
        raise InputError(files.blocks, "length", "a block without a labelled core")
    if len(offsets) and (offsets + lengths).max() > len(sequence):
        raise InputError(files.blocks, "offset", f"a block runs past the end of {files.sequence}")
    return Blocks(sequence, labels, offsets + crop, lengths - 2 * crop, context)


def budget_batches(
    lengths: np.ndarray, token_budget: int, order: np.ndarray | None = None, packed: bool = False
) -> list[list[int]]:
    """Blocks taken in `order` (default: by length) and cut greedily into batches whose size stays
    within `token_budget` (a block longer than the budget is a batch of its own): padded, count ×
    longest; `packed` (one row of blocks joined end to end), the sum of their lengths."""
    if order is None:
        order = np.argsort(lengths, kind="stable")
    batches: list[list[int]] = []
    current: list[int] = []
    longest = total = 0
    for index in order.tolist():
        length = int(lengths[index])
        longest, total = max(longest, length), total + length
        size = total if packed else (len(current) + 1) * longest
        if current and size > token_budget:
            batches.append(current)
            current, longest, total = [], length, length
        current.append(index)
    return batches + [current] if current else batches


def mixed_batches(
    lengths: np.ndarray, token_budget: int, mixing: float, seed: int, epoch: int, packed: bool = False
) -> list[list[int]]:
    """One epoch's batches (train_base.batch_mixing): 0 = the length-sorted ones, the same every
    epoch; m > 0 = cut in the order of length × U(1 − m, 1 + m) drawn from (seed, epoch), so blocks of
    nearby lengths meet in new batches each epoch (padded: more padding, the count may change by a
    few; packed: no padding whatever the order)."""
    if mixing == 0:
        return budget_batches(lengths, token_budget, packed=packed)
    rng = np.random.default_rng([seed, epoch, 1])
    key = lengths * rng.uniform(1 - mixing, 1 + mixing, len(lengths))
    return budget_batches(lengths, token_budget, np.argsort(key, kind="stable"), packed)


def blank_flanks(count: int, share: float, seed: int, epoch: int) -> frozenset[int]:
    """The blocks whose flanks read N this epoch (train_base.flank_n): each with probability
    `share`, drawn from (seed, epoch): the same on every rank."""
    if share <= 0:
        return frozenset()
    drawn = np.random.default_rng([seed, epoch, 2]).random(count) < share
    return frozenset(np.flatnonzero(drawn).tolist())


def epoch_order(batches: list[list[int]], seed: int, epoch: int, multiple: int) -> list[list[int]]:
    """The epoch's batches shuffled, then the first ones repeated up to a multiple of
    `multiple` (world size × accumulation): every rank runs as many steps."""
    rng = np.random.default_rng([seed, epoch])
    shuffled = [batches[i] for i in rng.permutation(len(batches))]
    short = -len(shuffled) % multiple
    return shuffled + shuffled[:short]


def padding_share(lengths: np.ndarray, batches: list[list[int]], packed: bool = False) -> float:
    """Padded positions / input positions over `batches` (packed: none)."""
    if packed:
        return 0.0
    padded = sum(len(b) * int(lengths[b].max()) for b in batches)
    real = sum(int(lengths[b].sum()) for b in batches)
    return 1 - real / padded if padded else 0.0
