"""Inputs of benchmarks/peers.py: the two window sets and the one BERT every peer starts from.

- demo: errorseq's own demo_data + extract rules (fp_vs_tp, planted motif), with flank 200:
  401-nt windows, ~120 BPE tokens (the default flank is 50 since the real-data tuning: ~35
  tokens, where the recipe's 256-token bucket would pad 7x; pinned so that runs compare).
- long tail: the log-normal token lengths of benchmarks/common.py (median 300, 50..2000; the
  768 windows of benchmarks/training.py for train), cut at 768 tokens, the MetaSpliceAI recipe's
  largest bucket, so that no peer truncates; random DNA with the demo's motif planted near the
  centre of 93 % of the error windows and 4 % of the others, so ROC-AUC means something.
- the model: a BPE tokenizer learnt by errorseq's own code on the demo's train windows
  (DNABERT-2 style) and a randomly initialised BertForSequenceClassification, saved once
  (`save_pretrained`), so every peer loads the same weights.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl

from benchmarks.common import lognormal_lengths
from workflow_scripts.data.demo import MOTIF, MOTIF_REACH, PLANT_PROBABILITY

DEMO_FLANK = 200
MAX_TOKENS = 768  # the recipe's largest bucket bound; every window is cut to fit it
MODEL_SIZES = {
    # 2 CPU cores: small enough for a few hundred steps in a minute
    "small": {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 256},
    # a GPU: BERT-base, the size of DNABERT-2-117M
    "base": {
        "hidden_size": 768,
        "num_hidden_layers": 12,
        "num_attention_heads": 12,
        "intermediate_size": 3072,
    },
}
BPE_VOCABULARY = 256


def run_rule(args: list[str], log: Path) -> None:
    """One errorseq rule's entry point; its output goes to `log`, a failure stops the benchmark."""
    with log.open("w") as handle:
        done = subprocess.run([sys.executable, "-m", *args], stdout=handle, stderr=subprocess.STDOUT)
    if done.returncode:
        raise SystemExit(f"peers: {args[0]} failed (rc {done.returncode}):\n{log.read_text()[-2000:]}")


def demo_windows(folder: Path, n_genes: int) -> Path:
    """The demo genome and calls, then the fp_vs_tp windows (errorseq's rules)."""
    folder.mkdir(parents=True, exist_ok=True)
    windows = folder / "windows.parquet"
    if windows.exists():
        return windows
    genome, calls = str(folder / "genome.fa.gz"), str(folder / "calls.tsv")
    demo = {"demo": {"n_genes": n_genes}}
    run_rule(
        [
            "workflow_scripts.rules.demo_data",
            "--genome",
            genome,
            "--calls",
            calls,
            "--config",
            json.dumps(demo),
        ],
        folder / "demo_data.log",
    )
    experiment = {
        "experiment": {"name": "fp_vs_tp", "error_label": "FP", "correct_label": "TP"},
        "window": {"flank": DEMO_FLANK},
    }
    run_rule(
        [
            "workflow_scripts.rules.extract",
            *("--genome", genome, "--calls", calls, "--out", str(windows)),
            *("--config", json.dumps(experiment)),
        ],
        folder / "extract.log",
    )
    return windows


def save_model(folder: Path, train_sequences: list[str], size: str, seed: int = 0) -> Path:
    """BPE tokenizer (errorseq's tokenizer code) + a random BERT classifier, Hugging Face format."""
    import torch
    import transformers

    from workflow_scripts.tokenization.bpe import save_hf_tokenizer, train_bpe

    if (folder / "config.json").exists():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer = train_bpe(train_sequences, BPE_VOCABULARY, min_frequency=2)
    save_hf_tokenizer(tokenizer, folder)
    config = transformers.BertConfig(
        vocab_size=tokenizer.get_vocab_size(),
        max_position_embeddings=1024,
        pad_token_id=tokenizer.token_to_id("[PAD]"),
        **MODEL_SIZES[size],
    )
    torch.manual_seed(seed)
    transformers.BertForSequenceClassification(config).save_pretrained(str(folder))
    return folder


def random_dna(rng: np.random.Generator, length: int) -> str:
    return np.frombuffer(b"ACGT", np.uint8)[rng.integers(0, 4, length)].tobytes().decode()


def planted(rng: np.random.Generator, sequence: str, is_error: bool) -> str:
    """The demo's motif within MOTIF_REACH nt of the centre, with the demo's probabilities."""
    chance = PLANT_PROBABILITY["error" if is_error else "correct"]
    if len(sequence) < len(MOTIF) + 2 * MOTIF_REACH or rng.random() >= chance:
        return sequence
    start = len(sequence) // 2 + int(rng.integers(-MOTIF_REACH, MOTIF_REACH - len(MOTIF) + 2))
    return sequence[:start] + MOTIF + sequence[start + len(MOTIF) :]


def fit_tokens(sequence: str, tokenizer, max_tokens: int) -> str:
    """The centre of `sequence` cut until it is at most `max_tokens` tokens (CLS/SEP included)."""
    while (count := len(tokenizer.encode(sequence).ids)) > max_tokens:
        keep = int(len(sequence) * (max_tokens - 2) / (count - 2) * 0.99)
        left = (len(sequence) - keep) // 2
        sequence = sequence[left : left + keep]
    return sequence


def long_tail_windows(folder: Path, model_dir: Path, sizes: dict[str, int]) -> Path:
    """Windows of log-normal token lengths (benchmarks/common.py, one seed per split), labels
    balanced and independent of length, cut to MAX_TOKENS tokens."""
    from tokenizers import Tokenizer

    folder.mkdir(parents=True, exist_ok=True)
    windows = folder / "windows.parquet"
    if windows.exists():
        return windows
    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    probe = random_dna(np.random.default_rng(99), 20000)
    nt_per_token = len(probe) / (len(tokenizer.encode(probe).ids) - 2)
    rows = []
    for seed, (split, n) in enumerate(sizes.items()):
        rng = np.random.default_rng(seed)
        labels = rng.permutation(np.arange(n) % 2)
        for i, (tokens, label) in enumerate(zip(lognormal_lengths(n, seed), labels)):
            sequence = random_dna(rng, max(20, int(round((tokens - 2) * nt_per_token))))
            sequence = fit_tokens(planted(rng, sequence, bool(label)), tokenizer, MAX_TOKENS)
            name = f"{split}{i}"
            rows.append((name, name, split, int(label), sequence, len(sequence), len(sequence) // 2))
    table = pl.DataFrame(
        rows,
        schema=["id", "gene_id", "split", "label", "sequence", "length", "site_offset"],
        orient="row",
    )
    table.with_columns(pl.col("label").cast(pl.Int8)).write_parquet(windows)
    return windows


def train_sequences(windows: Path) -> list[str]:
    return pl.read_parquet(windows).filter(pl.col("split") == "train")["sequence"].to_list()
