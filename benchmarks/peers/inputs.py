"""The peers' inputs (benchmarks/peers/compare.py): the two window sets, the one BERT every peer
starts from, and errorseq's bucket rule on each set.

- demo: errorseq's demo windows (fp_vs_tp, planted motif) made by the workflow (a Snakemake
  target) with flank 200: 401-nt windows, ~120 BPE tokens (the default flank is 50 since the
  real-data tuning: ~35 tokens, where the recipe's 256-token bucket would pad 7x; pinned so that
  runs compare).
- long tail: the log-normal token lengths of benchmarks/inputs.py (median 300, 50..2000; the 768
  windows of benchmarks/throughput/training.py for train), cut at 768 tokens, the MetaSpliceAI
  recipe's largest bucket, so that no peer truncates; random DNA with the demo's motif planted
  near the centre of 93 % of the error windows and 4 % of the others, so ROC-AUC means something.
- the model: a BPE tokenizer learnt by errorseq's own code on the demo's train windows
  (DNABERT-2 style) and a randomly initialised BertForSequenceClassification, saved once
  (`save_pretrained`), so every peer loads the same weights.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import polars as pl

from benchmarks import inputs
from benchmarks.inputs import lognormal_lengths
from benchmarks.peers.batching import MAX_TOKENS
from benchmarks.runner import run_rule
from workflow_scripts.data.demo import MOTIF, MOTIF_REACH, PLANT_PROBABILITY

DEMO_FLANK = 200
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


def demo_windows(folder: Path, n_genes: int) -> Path:
    """The demo's fp_vs_tp windows at flank 200, made by the workflow in `folder`."""
    windows = inputs.demo_windows(folder, demo={"n_genes": n_genes}, window={"flank": DEMO_FLANK})
    return windows["fp_vs_tp"]


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
    """Windows of log-normal token lengths (benchmarks/inputs.py, one seed per split), labels
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


PRESETS = {
    "full": {"demo_genes": 2000, "long_tail": {"train": 768, "val": 256, "test": 384}},
    "quick": {"demo_genes": 150, "long_tail": {"train": 48, "val": 24, "test": 32}},
}


def bucket(name: str, windows: Path, model_dir: Path, tokens_per_rank: int, folder: Path) -> dict:
    """errorseq's bucket rule (it tokenises every window to count its tokens), timed."""
    folder.mkdir(parents=True, exist_ok=True)
    config = {
        "bucket": {"max_tokens_per_batch": tokens_per_rank, "max_length": MAX_TOKENS},
        "tokenizer": {"kind": "auto"},
        "model": {"backbone": "hf", "path": str(model_dir)},
    }
    outputs = {"manifest": folder / "manifest.parquet", "summary": folder / "summary.json"}
    began = time.time()
    run_rule("bucket", config, folder / "bucket.log", {"windows": windows}, outputs)
    return {
        "name": name,
        "windows": str(windows),
        **{k: str(v) for k, v in outputs.items()},
        "bucket_s": time.time() - began,
    }


def prepare(
    work: Path, quick: bool, data: list[str], model: str = "small", seed: int = 0, tokens_per_rank: int = 2048
) -> tuple[Path, list[dict]]:
    """The BERT (its tokenizer learnt on the demo's train windows) and each data set, bucketed:
    [{"name", "windows", "manifest", "summary", "bucket_s"}, ...]."""
    preset = PRESETS["quick" if quick else "full"]
    demo = demo_windows(work / "demo", preset["demo_genes"])
    model_dir = save_model(work / f"bert-{model}-seed{seed}", train_sequences(demo), model, seed)
    sources = {"demo": demo}
    if "long_tail" in data:
        sources["long_tail"] = long_tail_windows(work / "long_tail", model_dir, preset["long_tail"])
    runs = work / "runs"
    return model_dir, [
        bucket(name, sources[name], model_dir, tokens_per_rank, runs / name / "buckets") for name in data
    ]


def work_folder(work_dir: str | Path, quick: bool) -> Path:
    return Path(work_dir) / ("quick" if quick else "full")
