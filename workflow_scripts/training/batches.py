"""Windows + bucket manifest → tokenised batches for training and evaluation."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl
import torch

from workflow_scripts.errors import InputError
from workflow_scripts.models.call_inputs import feature_matrix
from workflow_scripts.models.score_channels import BaseProfiles, read_profiles
from workflow_scripts.tokenization.packed import pack_hf, pack_nucleotides
from workflow_scripts.tokenization.token_scores import pack_token_scores
from workflow_scripts.tokenization.tokenizers import NucleotideTokenizer

MANIFEST_COLUMNS = ("id", "split", "label", "token_length", "bucket")


@dataclass
class SplitData:
    """One split's sequences, labels and bucket assignments, in manifest order."""

    ids: list[str]
    gene_ids: list[str]
    sequences: list[str]
    labels: np.ndarray
    lengths: np.ndarray
    token_lengths: np.ndarray
    buckets: np.ndarray
    features: np.ndarray | None = None  # [rows, F] call inputs (models/call_inputs.py), if any
    profiles: BaseProfiles | None = None  # per-base score channels (models/score_channels.py), if any

    def __len__(self) -> int:
        return len(self.ids)


def load_split(
    windows_path: str | Path,
    manifest_path: str | Path,
    split: str,
    input_columns: Sequence[str] = (),
    score_channels: Sequence[str] = (),
) -> SplitData:
    """Join windows with the bucket manifest and keep one split (with the call inputs and the
    score channel columns the model takes)."""
    manifest = pl.read_parquet(manifest_path)
    missing = [c for c in MANIFEST_COLUMNS if c not in manifest.columns]
    if missing:
        raise InputError(manifest_path, missing[0], "column missing from the bucket manifest")
    available = pl.read_parquet_schema(windows_path)
    for name in [*input_columns, *score_channels]:
        if name not in available:
            raise InputError(windows_path, name, "column missing: the model takes it as input")
    columns = ["id", "gene_id", "sequence", "length", *input_columns, *score_channels]
    windows = pl.read_parquet(windows_path, columns=columns)
    joined = manifest.filter(pl.col("split") == split).join(windows, on="id", how="inner", suffix="_w")
    return SplitData(
        ids=joined["id"].to_list(),
        gene_ids=joined["gene_id"].cast(pl.String).to_list(),
        sequences=joined["sequence"].to_list(),
        labels=joined["label"].to_numpy().astype(np.int64),
        lengths=joined["length"].to_numpy().astype(np.int64),
        token_lengths=joined["token_length"].to_numpy().astype(np.int64),
        buckets=joined["bucket"].to_numpy().astype(np.int64),
        features=feature_matrix(joined, input_columns, windows_path),
        profiles=read_profiles(joined, score_channels, windows_path),
    )


class BatchCollator:
    """Turns a list of sample indices into (ids, mask, labels) tensors, padded to the batch max.

    The windows are tokenised once, here, into one flat array (tokenization/packed.py); a batch
    is cut from it by array indexing. With `pin_memory` (set where the device is a GPU) the
    batch's tensors are page-locked, so that copies to the device need not wait."""

    def __init__(self, data: SplitData, tokenizer: NucleotideTokenizer, max_tokens: int):
        self.data = data
        self.tokenizer = tokenizer
        self.max_tokens = max_tokens
        self.max_nucleotides = None  # BPE: the tokenizer centre-crops the token ids itself
        self.pin_memory = False
        if getattr(tokenizer, "needs_sequences", False):
            self.tokens = pack_hf(tokenizer, data.sequences, max_tokens)
        else:
            # The tokenizer adds a CLS token; k-mers take k-1 extra nucleotides.
            self.max_nucleotides = max_tokens - 1 + tokenizer.k - 1
            self.tokens = pack_nucleotides(tokenizer, data.sequences, self.max_nucleotides)
        self.scores = None
        if data.profiles is not None:
            self.scores = pack_token_scores(
                tokenizer, data.sequences, data.profiles, max_tokens, self.max_nucleotides
            )

    def encode(self, indices: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
        """(ids, mask) of these windows, each cut to its centre max_tokens tokens."""
        return self.tokens.padded(indices, self.pin_memory)

    def __call__(self, indices: list[int]) -> dict[str, torch.Tensor]:
        ids, mask = self.encode(indices)
        batch = {
            "ids": ids,
            "mask": mask,
            "labels": self._host_tensor(self.data.labels[indices].astype(np.int64, copy=False)),
            "index": self._host_tensor(np.asarray(indices, dtype=np.int64)),
        }
        if self.data.features is not None:
            batch["features"] = self._host_tensor(self.data.features[indices])
        if self.scores is not None:
            batch["scores"] = self.scores.padded(indices, self.pin_memory)
        return batch

    def _host_tensor(self, values: np.ndarray) -> torch.Tensor:
        tensor = torch.from_numpy(np.ascontiguousarray(values))
        return tensor.pin_memory() if self.pin_memory else tensor


def pin_batches_for(collator, device: torch.device) -> None:
    """Page-locked batches when they go to a CUDA device (a MaskingCollator's masking makes new
    tensors, so only a BatchCollator's own batches are pinned)."""
    if isinstance(collator, BatchCollator):
        collator.pin_memory = device.type == "cuda" and torch.cuda.is_available()


def model_inputs(batch: dict) -> tuple[torch.Tensor | None, ...]:
    """What the model is called with: ids, mask, then features for a model with call inputs and
    scores for one with score channels (features None where it has score channels only)."""
    inputs = (batch["ids"], batch["mask"], batch.get("features"), batch.get("scores"))
    return inputs[: 4 if "scores" in batch else 3 if "features" in batch else 2]


def inputs_on(batch: dict, device: torch.device) -> tuple[torch.Tensor | None, ...]:
    """model_inputs, moved to `device`."""
    return tuple(None if tensor is None else tensor.to(device) for tensor in model_inputs(batch))


class IndexDataset(torch.utils.data.Dataset):
    """A dataset whose items are their own indices; the collator does the real work."""

    def __init__(self, size: int):
        self.size = size

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, index: int) -> int:
        return index


def make_loader(data: SplitData, batch_sampler, collator: BatchCollator) -> torch.utils.data.DataLoader:
    return torch.utils.data.DataLoader(
        IndexDataset(len(data)), batch_sampler=batch_sampler, collate_fn=collator, num_workers=0
    )


def sorted_batches(data: SplitData, batch_size: int, rank: int = 0, world_size: int = 1) -> list[list[int]]:
    """Evaluation batches: this rank's share, sorted by length so padding stays small."""
    mine = np.arange(rank, len(data), world_size)
    order = mine[np.argsort(data.token_lengths[mine], kind="stable")]
    return [order[i : i + batch_size].tolist() for i in range(0, len(order), batch_size)]


def budget_batches(
    token_lengths: np.ndarray, max_batch_tokens: int, rank: int = 0, world_size: int = 1
) -> list[list[int]]:
    """Evaluation batches: this rank's share, sorted by length, each holding as many windows as
    fit in max_batch_tokens once padded to its longest (at least one)."""
    mine = np.arange(rank, len(token_lengths), world_size)
    order = mine[np.argsort(token_lengths[mine], kind="stable")]
    batches: list[list[int]] = []
    current: list[int] = []
    for index, length in zip(order.tolist(), token_lengths[order].tolist()):
        if current and (len(current) + 1) * length > max_batch_tokens:
            batches.append(current)
            current = []
        current.append(index)
    return batches + [current] if current else batches


def training_batch_tokens(train: SplitData, batch_sizes: Sequence[int], max_tokens: int) -> int:
    """The most padded tokens in one of training's per-rank batches: its batch size times its
    longest window (cut to max_tokens), over the buckets (the bucket summary's max_batch_tokens,
    for the buckets' real windows)."""
    longest = np.zeros(len(batch_sizes), dtype=np.int64)
    np.maximum.at(longest, train.buckets, np.minimum(train.token_lengths, max_tokens))
    return int((np.asarray(batch_sizes, dtype=np.int64) * longest).max(initial=0))
