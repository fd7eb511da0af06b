"""The `tokenizer` rule: train a DNA byte-pair-encoding tokenizer on the train split's windows.

DNABERT-2 style: each window is one "word" over ACGTN, merges are learnt from base pairs upward,
and every encoded window is `[CLS] tokens [SEP]`. The result is saved in Hugging Face format
(tokenizer.json + tokenizer_config.json), so `AutoTokenizer.from_pretrained(dir)` loads it and
the bucket rule counts tokens with it (`--tokenizer-dir`). Needs the optional HF extra.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import polars as pl

from workflow_scripts.errors import InputError, run_cli

ALPHABET = list("ACGTN")
SPECIAL_TOKENS = {"pad_token": "[PAD]", "unk_token": "[UNK]", "cls_token": "[CLS]",
                  "sep_token": "[SEP]", "mask_token": "[MASK]"}  # ids 0..4, PAD = 0
UNBOUNDED_LENGTH = 1_000_000  # errorseq truncates itself (bucket.max_length), never the tokenizer


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--windows", required=True, help="windows parquet (sequence, split)")
    parser.add_argument("--vocab-size", type=int, default=256)
    parser.add_argument("--min-frequency", type=int, default=2)
    parser.add_argument("--max-windows", type=int, default=200_000, help="train on at most this many")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out-dir", required=True)
    return parser.parse_args(argv)


def training_sequences(path: str, max_windows: int, seed: int) -> list[str]:
    """The train split's sequences (a seeded sample of max_windows when there are more)."""
    windows = pl.read_parquet(path, columns=["sequence", "split"]).filter(pl.col("split") == "train")
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
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=min_frequency,
                                  special_tokens=list(SPECIAL_TOKENS.values()),
                                  initial_alphabet=ALPHABET, show_progress=False)
    tokenizer.train_from_iterator(sequences, trainer=trainer)
    cls, sep = SPECIAL_TOKENS["cls_token"], SPECIAL_TOKENS["sep_token"]
    tokenizer.post_processor = processors.TemplateProcessing(
        single=f"{cls} $A {sep}", pair=f"{cls} $A {sep} $B:1 {sep}:1",
        special_tokens=[(cls, tokenizer.token_to_id(cls)), (sep, tokenizer.token_to_id(sep))])
    return tokenizer


def save_hf_tokenizer(tokenizer, out_dir: str | Path) -> None:
    from workflow_scripts.models.hf import require_transformers

    transformers = require_transformers()
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tokenizer,
                                                model_max_length=UNBOUNDED_LENGTH, **SPECIAL_TOKENS)
    fast.save_pretrained(str(out_dir))


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.vocab_size < len(ALPHABET) + len(SPECIAL_TOKENS):
        raise InputError("config", "tokenizer.vocab_size", f"must be at least "
                         f"{len(ALPHABET) + len(SPECIAL_TOKENS)} (got {args.vocab_size})")
    sequences = training_sequences(args.windows, args.max_windows, args.seed)
    tokenizer = train_bpe(sequences, args.vocab_size, args.min_frequency)
    save_hf_tokenizer(tokenizer, args.out_dir)
    sample = sequences[: min(len(sequences), 2000)]
    tokens = sum(len(tokenizer.encode(seq).ids) - 2 for seq in sample)
    print(f"BPE tokenizer: {tokenizer.get_vocab_size()} tokens learnt from {len(sequences)} train "
          f"windows; {sum(map(len, sample)) / max(tokens, 1):.2f} nt per token; saved to {args.out_dir}",
          file=sys.stderr)


if __name__ == "__main__":
    run_cli(main)
