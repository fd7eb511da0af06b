"""The `tokenizer` rule: train a DNA byte-pair-encoding tokenizer on the train split's windows.

DNABERT-2 style: each window is one "word" over ACGTN, merges are learnt from base pairs upward,
and every encoded window is `[CLS] tokens [SEP]`. The result is saved in Hugging Face format
(tokenizer.json + tokenizer_config.json), so `AutoTokenizer.from_pretrained(dir)` loads it and
the bucket rule counts tokens with it. Needs the optional HF extra. The tokenizer config
section's vocab_size (at least the 5 bases + 5 special tokens), min_frequency and max_windows
are checked by the schema.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from workflow_scripts.data.tables import read_table
from workflow_scripts.errors import InputError

if TYPE_CHECKING:
    from workflow_scripts.config.types import TokenizerSection

ALPHABET = list("ACGTN")
SPECIAL_TOKENS = {
    "pad_token": "[PAD]",
    "unk_token": "[UNK]",
    "cls_token": "[CLS]",
    "sep_token": "[SEP]",
    "mask_token": "[MASK]",
}  # ids 0..4, PAD = 0
UNBOUNDED_LENGTH = 1_000_000  # errorseq truncates itself (bucket.max_length), never the tokenizer


def training_sequences(path: str, max_windows: int, seed: int) -> list[str]:
    """The train split's sequences (a seeded sample of max_windows when there are more)."""
    windows = read_table(path, columns=["sequence", "split"]).filter(pl.col("split") == "train")
    if windows.height == 0:
        raise InputError(path, "split", "no train windows to learn a tokenizer from")
    sequences = windows["sequence"].to_list()
    if len(sequences) > max_windows:
        keep = np.random.default_rng(seed).choice(len(sequences), max_windows, replace=False)
        sequences = [sequences[i] for i in np.sort(keep)]
    return sequences


def train_bpe(sequences: list[str], vocab_size: int, min_frequency: int):
    """A `tokenizers.Tokenizer` with BPE merges learnt from `sequences`, wrapping in CLS/SEP."""
    from tokenizers import Tokenizer, models, processors, trainers

    tokenizer = Tokenizer(models.BPE(unk_token=SPECIAL_TOKENS["unk_token"]))
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=min_frequency,
        special_tokens=list(SPECIAL_TOKENS.values()),
        initial_alphabet=ALPHABET,
        show_progress=False,
    )
    tokenizer.train_from_iterator(sequences, trainer=trainer)
    cls, sep = SPECIAL_TOKENS["cls_token"], SPECIAL_TOKENS["sep_token"]
    tokenizer.post_processor = processors.TemplateProcessing(
        single=f"{cls} $A {sep}",
        pair=f"{cls} $A {sep} $B:1 {sep}:1",
        special_tokens=[(cls, tokenizer.token_to_id(cls)), (sep, tokenizer.token_to_id(sep))],
    )
    return tokenizer


def save_hf_tokenizer(tokenizer, out_dir: str | Path) -> None:
    from workflow_scripts.models.hf import require_transformers

    transformers = require_transformers()
    fast = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, model_max_length=UNBOUNDED_LENGTH, **SPECIAL_TOKENS
    )
    fast.save_pretrained(str(out_dir))


def learn_tokenizer(windows_path: str, tokenizer: TokenizerSection, seed: int, out_dir: str | Path) -> str:
    """Learn BPE merges (the `tokenizer:` section) on the train windows, save them in Hugging
    Face format into `out_dir`; returns a one-line report."""
    sequences = training_sequences(windows_path, tokenizer.max_windows, seed)
    learnt = train_bpe(sequences, tokenizer.vocab_size, tokenizer.min_frequency)
    save_hf_tokenizer(learnt, out_dir)
    sample = sequences[: min(len(sequences), 2000)]
    tokens = sum(len(learnt.encode(seq).ids) - 2 for seq in sample)
    return (
        f"BPE tokenizer: {learnt.get_vocab_size()} tokens learnt from {len(sequences)} train windows; "
        f"{sum(map(len, sample)) / max(tokens, 1):.2f} nt per token; saved to {out_dir}"
    )
