"""Built-in nucleotide tokenizer: single bases or overlapping k-mers over ACGTN."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from workflow_scripts.errors import InputError

if TYPE_CHECKING:
    import torch

    from workflow_scripts.config.types import ModelSection, TokenizerSection

ALPHABET = "ACGTN"
PAD_ID = 0
CLS_ID = 1
N_SPECIAL = 2

_INVALID = -1
_BASE_CODE = np.full(256, _INVALID, dtype=np.int64)
for _code, _base in enumerate(ALPHABET):
    _BASE_CODE[ord(_base)] = _code


def _invalid_character_error(seq: str) -> ValueError:
    bad = next(char for char in seq if char not in ALPHABET)
    return ValueError(f"invalid character {bad!r} in sequence; expected only {ALPHABET}")


def base_codes(seq: str) -> np.ndarray:
    """Map each base to 0..4 (A, C, G, T, N); ValueError naming any other character."""
    try:
        raw = np.frombuffer(seq.encode("ascii"), dtype=np.uint8)
    except UnicodeEncodeError:
        raise _invalid_character_error(seq) from None
    codes = _BASE_CODE[raw]
    if (codes == _INVALID).any():
        raise _invalid_character_error(seq)
    return codes


class NucleotideTokenizer:
    """Ids: 0 = PAD, 1 = CLS (prepended to every sequence), then 5**k k-mers (stride 1).

    A k-mer's id is 2 + its base-5 value (A=0, C=1, G=2, T=3, N=4, first base most
    significant). N is an ordinary base. A sequence shorter than k is right-filled
    with N to make its single k-mer, so every sequence has at least one real token.
    """

    kind = "nucleotide"
    needs_sequences = False  # token counts follow from nucleotide lengths alone

    def __init__(self, k: int = 1):
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise ValueError(f"k must be a positive integer, got {k!r}")
        self.k = int(k)
        self.pad_id = PAD_ID
        self.cls_id = CLS_ID
        self.vocab_size = N_SPECIAL + len(ALPHABET) ** self.k
        self._place_values = len(ALPHABET) ** np.arange(self.k - 1, -1, -1, dtype=np.int64)

    def __repr__(self) -> str:
        return f"NucleotideTokenizer(k={self.k})"

    def token_lengths(self, lengths: np.ndarray) -> np.ndarray:
        """Tokens per sequence (CLS included) for nucleotide lengths."""
        lengths = np.asarray(lengths, dtype=np.int64)
        if (lengths < 0).any():
            raise ValueError("nucleotide lengths must be non-negative")
        return 1 + np.maximum(lengths - self.k + 1, 1)

    def encode(self, seq: str, max_length: int | None = None) -> np.ndarray:
        """Token ids (int64) for one sequence: CLS then its k-mers, cut to max_length if given."""
        codes = base_codes(seq)
        if len(codes) < self.k:
            codes = np.concatenate([codes, np.full(self.k - len(codes), ALPHABET.index("N"))])
        n_kmers = len(codes) - self.k + 1
        kmer_values = np.zeros(n_kmers, dtype=np.int64)
        for offset, place_value in enumerate(self._place_values):
            kmer_values += codes[offset : offset + n_kmers] * place_value
        ids = np.concatenate([[CLS_ID], kmer_values + N_SPECIAL]).astype(np.int64)
        return ids if max_length is None else ids[:max_length]

    def encode_batch(
        self, seqs: Sequence[str], max_length: int | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """(ids int64 [B, T], attention_mask bool [B, T]), padded with PAD to the batch max."""
        import torch  # here, so the CPU-only bucket rule does not pay for importing torch

        if max_length is not None and max_length < 1:
            raise ValueError(f"max_length must be at least 1, got {max_length}")
        encoded = [self.encode(seq, max_length) for seq in seqs]
        width = max((len(ids) for ids in encoded), default=0)
        ids = np.full((len(encoded), width), PAD_ID, dtype=np.int64)
        for row, row_ids in enumerate(encoded):
            ids[row, : len(row_ids)] = row_ids
        ids_tensor = torch.from_numpy(ids)
        return ids_tensor, ids_tensor != PAD_ID

    def to_dict(self) -> dict:
        return {"kind": self.kind, "k": self.k}

    def vocabulary(self) -> dict:
        """What the ids follow from: the alphabet, k and the special ids."""
        return {"alphabet": ALPHABET, "k": self.k, "pad": PAD_ID, "cls": CLS_ID}

    @classmethod
    def from_dict(cls, config: dict) -> NucleotideTokenizer:
        if config.get("kind") != cls.kind:
            raise ValueError(f"not a nucleotide tokenizer config: {config!r}")
        return cls(k=config.get("k", 1))


def load_tokenizer(config: dict):
    """The tokenizer a bucket summary or model.json describes: nucleotide k-mers, or (kind hf)
    a Hugging Face tokenizer directory loaded offline (workflow_scripts.models.hf)."""
    kind = config.get("kind")
    if kind == NucleotideTokenizer.kind:
        return NucleotideTokenizer.from_dict(config)
    if kind == "hf":
        from workflow_scripts.models.hf import HFTokenizer

        return HFTokenizer(config["path"], trust_remote_code=bool(config.get("trust_remote_code")))
    raise ValueError(f"unknown tokenizer kind {kind!r} in {config!r} (expected nucleotide or hf)")


def tokenizer_digest(tokenizer) -> str:
    """sha256 of the tokenizer's config and vocabulary: a tokenizer that maps any token to
    another id (another k, a retrained or replaced Hugging Face vocabulary) has another digest."""
    described = {"config": tokenizer.to_dict(), "vocabulary": tokenizer.vocabulary()}
    return hashlib.sha256(json.dumps(described, sort_keys=True).encode()).hexdigest()


def window_token_lengths(tokenizer, sequences, lengths: np.ndarray) -> np.ndarray:
    """Tokens per window (special tokens included, before truncation). `sequences` is a
    callable returning the sequences, read only when the tokenizer needs them (BPE)."""
    if tokenizer.needs_sequences:
        return tokenizer.sequence_token_lengths(sequences())
    return tokenizer.token_lengths(lengths)


def resolve_tokenizer_kind(tokenizer: dict, model: dict) -> str:
    """tokenizer_kind of the workflow's config (the `tokenizer:` and `model:` sections as dicts)."""
    return tokenizer_kind(tokenizer["kind"], model["backbone"])


def tokenizer_kind(kind: str, backbone: str) -> str:
    """tokenizer.kind with auto resolved: the model's own (hf) with backbone hf, else nucleotide."""
    if kind == "auto":
        return "hf" if backbone == "hf" else "nucleotide"
    return kind


def tokenizer_from_config(tokenizer: TokenizerSection, model: ModelSection, learnt_dir: str | None = None):
    """The tokenizer that the `tokenizer:` and `model:` sections name: nucleotide k-mers, the BPE
    vocabulary the tokenizer rule learnt (`learnt_dir`), or a Hugging Face tokenizer directory
    (tokenizer.path, else model.path; the model's remote code only with backbone hf)."""
    kind = tokenizer_kind(tokenizer.kind, model.backbone)
    if (kind == "bpe") != bool(learnt_dir):
        raise InputError(
            "config",
            "tokenizer.kind",
            f"{kind}: a learnt tokenizer directory goes with bpe "
            f"and only with bpe (got {learnt_dir or 'none'})",
        )
    if kind == "nucleotide":
        return NucleotideTokenizer(tokenizer.k)
    if kind == "bpe":
        return load_tokenizer({"kind": "hf", "path": str(learnt_dir)})
    trust = model.backbone == "hf" and model.trust_remote_code
    path = tokenizer.path or model.path
    return load_tokenizer({"kind": "hf", "path": path, "trust_remote_code": trust})
