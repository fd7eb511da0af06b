"""Windows tokenised once: every window's token ids in one flat array, and padded batches cut
from it by array indexing (training/batches.BatchCollator packs a split, or a chunk, once)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np
import torch

from workflow_scripts.tokenization.tokenizers import ALPHABET, CLS_ID, N_SPECIAL, PAD_ID, base_codes

CHUNK_WINDOWS = 4096  # windows tokenised at a time: bounds the transient int64 and list memory
EncodeChunk = Callable[[Sequence[str]], tuple[np.ndarray, np.ndarray]]


@dataclass
class PackedTokens:
    """Window i's token ids are flat[offsets[i] : offsets[i + 1]]; flat has the smallest unsigned
    dtype that holds the vocabulary (uint8 for k <= 3: no more memory than the sequences)."""

    flat: np.ndarray
    offsets: np.ndarray  # int64 [windows + 1]
    pad_id: int

    def __len__(self) -> int:
        return len(self.offsets) - 1

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    def padded(self, indices, pin_memory: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
        """(ids int64 [B, T], mask bool [B, T]) of these windows, padded with pad_id to the
        longest; page-locked with `pin_memory` (for non-blocking copies to a GPU)."""
        return padded_rows(self.flat, self.offsets, indices, self.pad_id, torch.long, pin_memory)


def padded_rows(
    flat: np.ndarray, offsets: np.ndarray, indices, pad_value, dtype: torch.dtype, pin_memory: bool = False
) -> tuple[torch.Tensor, torch.Tensor]:
    """(values [B, T, *flat.shape[1:]] of `dtype`, mask bool [B, T]): row i of the batch is
    flat[offsets[i] : offsets[i + 1]], padded with pad_value to the longest row."""
    rows = np.asarray(indices, dtype=np.int64)
    starts = offsets[rows]
    lengths = offsets[rows + 1] - starts
    width = int(lengths.max(initial=0))
    shape = (len(rows), width, *flat.shape[1:])
    values = torch.full(shape, pad_value, dtype=dtype, pin_memory=pin_memory)
    mask = torch.empty((len(rows), width), dtype=torch.bool, pin_memory=pin_memory)
    real = mask.numpy()
    np.less(np.arange(width), lengths[:, None], out=real)
    run_starts = np.cumsum(lengths) - lengths  # where each row's values begin among all real ones
    source = np.arange(int(lengths.sum())) + np.repeat(starts - run_starts, lengths)
    values.numpy()[real] = flat[source]  # row-major: row after row, as `source` runs
    return values, mask


def id_dtype(largest_id: int) -> np.dtype:
    return np.min_scalar_type(max(int(largest_id), 0))


def pack_chunks(sequences: Sequence[str], encode_chunk: EncodeChunk, pad_id: int) -> PackedTokens:
    """Concatenate `encode_chunk`'s (flat ids, tokens per window) over chunks of the sequences."""
    parts = [
        encode_chunk(sequences[start : start + CHUNK_WINDOWS])
        for start in range(0, len(sequences), CHUNK_WINDOWS)
    ]
    lengths = np.concatenate([count for _, count in parts]) if parts else np.zeros(0, np.int64)
    flat = np.concatenate([ids for ids, _ in parts]) if parts else np.zeros(0, np.uint8)
    return PackedTokens(flat, np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64), pad_id)


def pack_nucleotides(tokenizer, sequences: Sequence[str], max_nucleotides: int) -> PackedTokens:
    """Each sequence's centre max_nucleotides bases (its first (len - max) // 2 dropped) as CLS +
    k-mer ids, exactly as NucleotideTokenizer.encode gives them, a chunk of windows at a time."""
    dtype = id_dtype(tokenizer.vocab_size - 1)
    return pack_chunks(sequences, lambda chunk: kmer_chunk(tokenizer, chunk, max_nucleotides, dtype), PAD_ID)


def kmer_chunk(
    tokenizer, sequences: Sequence[str], max_nucleotides: int, dtype: np.dtype
) -> tuple[np.ndarray, np.ndarray]:
    k = tokenizer.k
    codes = base_codes("".join(sequences))
    lengths = np.fromiter(map(len, sequences), dtype=np.int64, count=len(sequences))
    kept = np.minimum(lengths, max_nucleotides)
    first = np.cumsum(lengths) - lengths + (lengths - kept) // 2  # the centre crop's first base
    n_kmers = np.maximum(kept - k + 1, 1)
    kmer_ids = kmer_values(codes, k) + N_SPECIAL
    counts = 1 + n_kmers
    cls_at = np.cumsum(counts) - counts
    flat = np.empty(int(counts.sum()), dtype=dtype)
    flat[cls_at] = CLS_ID
    body = np.ones(len(flat), dtype=bool)
    body[cls_at] = False
    short = kept < k  # encode right-fills these with N: one k-mer each, made below
    n_body = np.where(short, 0, n_kmers)
    body[(cls_at + 1)[short]] = False
    flat[body] = kmer_ids[np.flatnonzero(body) + np.repeat(first - cls_at - 1, n_body)]
    for row in np.flatnonzero(short).tolist():
        begin = int(lengths[row] - kept[row]) // 2
        flat[cls_at[row] + 1] = tokenizer.encode(sequences[row][begin : begin + int(kept[row])])[1]
    return flat, counts


def kmer_values(codes: np.ndarray, k: int) -> np.ndarray:
    """The base-5 value of the k-mer starting at every position (past the end: N-filled)."""
    filled = np.concatenate([codes, np.full(k - 1, ALPHABET.index("N"), dtype=codes.dtype)])
    values = np.zeros(len(codes), dtype=np.int64)
    for offset in range(k):
        values += filled[offset : offset + len(codes)] * len(ALPHABET) ** (k - 1 - offset)
    return values


def pack_hf(tokenizer, sequences: Sequence[str], max_tokens: int) -> PackedTokens:
    """A Hugging Face tokenizer's ids for each sequence, centre-cropped to max_tokens as
    HFTokenizer.encode_batch crops them (models/hf.centre_crop_ids)."""
    from workflow_scripts.models.hf import centre_crop_ids

    dtype = id_dtype(max(tokenizer.vocab_size - 1, tokenizer.pad_id))

    def encode_chunk(chunk: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        return pack_id_lists([centre_crop_ids(ids, max_tokens) for ids in tokenizer.encode_ids(chunk)], dtype)

    return pack_chunks(sequences, encode_chunk, tokenizer.pad_id)


def pack_id_lists(id_lists: Sequence[Sequence[int]], dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """(flat ids, tokens per window) of windows already tokenised."""
    counts = np.fromiter(map(len, id_lists), dtype=np.int64, count=len(id_lists))
    flat = np.fromiter(chain.from_iterable(id_lists), dtype=np.int64, count=int(counts.sum()))
    if len(flat) and (flat.min() < 0 or flat.max() > np.iinfo(dtype).max):
        raise ValueError(f"token ids {flat.min()}..{flat.max()} outside the tokenizer's vocabulary")
    return flat.astype(dtype), counts
