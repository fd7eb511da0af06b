"""Per-base score channels (models/score_channels.py) pooled to the tokens the model sees.

Every token gets the mean of the scores of the bases it covers: with single-base tokens that is
the base's own score; an overlapping k-mer (stride 1) covers k bases, so a peak shows in the k
tokens that hold its base, as the k-mer's letters do; a BPE token covers its own span, known from
the fast tokenizer's offsets. Special tokens (CLS, SEP) cover no base and get 0, as padding does.
The tokens are cut exactly as tokenization/packed.py cuts the ids (the centre crop), so token j's
scores line up with token j's id.

The mean keeps a profile's sum (each base counted once per token that holds it) and matches how
attribution spreads a k-mer token's score evenly over its bases (inference/attribution.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from workflow_scripts.errors import InputError
from workflow_scripts.models.score_channels import SETTING_KEY, BaseProfiles
from workflow_scripts.tokenization.packed import CHUNK_WINDOWS, padded_rows


@dataclass
class TokenScores:
    """Window i's token scores are flat[offsets[i] : offsets[i + 1]] ([tokens, channels])."""

    flat: np.ndarray  # float32
    offsets: np.ndarray  # int64 [windows + 1]

    def padded(self, indices, pin_memory: bool = False) -> torch.Tensor:
        """float32 [B, T, channels], 0 at padding."""
        return padded_rows(self.flat, self.offsets, indices, 0.0, torch.float32, pin_memory)[0]


def pack_token_scores(
    tokenizer, sequences: Sequence[str], profiles: BaseProfiles, max_tokens: int, max_nucleotides: int | None
) -> TokenScores:
    """Each window's token scores, a chunk of windows at a time (bounded float64 sums)."""
    parts, counts = [], []
    for start in range(0, len(sequences), CHUNK_WINDOWS):
        stop = min(start + CHUNK_WINDOWS, len(sequences))
        chunk = profiles.rows(start, stop)
        if getattr(tokenizer, "needs_sequences", False):
            starts, ends, n_tokens = hf_token_spans(tokenizer, sequences[start:stop], max_tokens)
        else:
            starts, ends, n_tokens = kmer_token_spans(np.diff(chunk.offsets), tokenizer.k, max_nucleotides)
        shift = np.repeat(chunk.offsets[:-1], n_tokens)  # window-local bases → the chunk's flat bases
        parts.append(span_means(chunk.values, starts + shift, ends + shift))
        counts.append(n_tokens)
    channels = profiles.values.shape[1]
    flat = np.concatenate(parts) if parts else np.zeros((0, channels), np.float32)
    lengths = np.concatenate(counts) if counts else np.zeros(0, np.int64)
    return TokenScores(flat, np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64))


def span_means(values: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Mean of values[start:end] per span (0 for an empty one), float32 [spans, channels]."""
    sums = np.concatenate([np.zeros((1, values.shape[1])), np.cumsum(values, axis=0, dtype=np.float64)])
    widths = np.maximum(ends - starts, 1)[:, None]
    return ((sums[ends] - sums[starts]) / widths).astype(np.float32)


def kmer_token_spans(
    lengths: np.ndarray, k: int, max_nucleotides: int | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(start, end) bases of every token, CLS first (empty), window-local, and tokens per window,
    as packed.kmer_chunk cuts them: the centre max_nucleotides bases, k-mers at stride 1, a window
    shorter than k one token over all of it."""
    kept = lengths if max_nucleotides is None else np.minimum(lengths, max_nucleotides)
    first = (lengths - kept) // 2
    n_tokens = 1 + np.maximum(kept - k + 1, 1)
    window_of = np.repeat(np.arange(len(lengths)), n_tokens)
    within = np.arange(int(n_tokens.sum())) - np.repeat(np.cumsum(n_tokens) - n_tokens, n_tokens)
    kmer = within - 1  # -1 = CLS
    starts = first[window_of] + np.maximum(kmer, 0)
    ends = first[window_of] + np.minimum(kmer + k, kept[window_of])
    ends = np.where(kmer < 0, starts, ends)
    return starts, ends, n_tokens


def hf_token_spans(
    tokenizer, sequences: Sequence[str], max_tokens: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The same for a Hugging Face tokenizer, from its offsets (special tokens: empty), centre-
    cropped as packed.pack_hf crops the ids."""
    from workflow_scripts.models.hf import centre_crop_ids

    fast = tokenizer.tokenizer
    if not getattr(fast, "is_fast", False):
        raise InputError(
            tokenizer.path,
            SETTING_KEY,
            "a slow tokenizer gives no token offsets to align the scores with; "
            f"set {SETTING_KEY}: off or use a fast tokenizer (tokenizer.json)",
        )
    offsets = fast(
        list(sequences), add_special_tokens=True, truncation=False, return_offsets_mapping=True, verbose=False
    )["offset_mapping"]
    cropped = [centre_crop_ids(list(spans), max_tokens) for spans in offsets]
    n_tokens = np.fromiter(map(len, cropped), dtype=np.int64, count=len(cropped))
    spans = np.asarray([span for row in cropped for span in row], dtype=np.int64).reshape(-1, 2)
    return spans[:, 0], spans[:, 1], n_tokens
