"""The unlabeled windows masked-LM pretraining learns from (`pretrain.source`):

- `train_windows`: the experiment's train split; `all_windows`: every split (labels unused);
- `genome`: `pretrain.genome_windows` windows at seeded random genome positions, with lengths
  drawn from the train windows' and bucketed like them. Windows more than MAX_N_FRACTION N
  (assembly gaps, telomeres) are drawn again.

Validation is always the experiment's val split (the masked-token loss on it).
"""

from __future__ import annotations

import numpy as np

from workflow_scripts.bucketing.assign import assign_buckets
from workflow_scripts.config.types import PretrainSection
from workflow_scripts.data.genome import Genome
from workflow_scripts.errors import InputError
from workflow_scripts.tokenization.tokenizers import window_token_lengths
from workflow_scripts.training.batches import SplitData, load_split

MAX_N_FRACTION = 0.1
SAMPLING_ROUNDS = 20


def unlabeled_data(
    windows: str,
    manifest: str,
    pretrain: PretrainSection,
    genome_dir: str | None,
    summary: dict,
    tokenizer,
    seed: int,
) -> tuple[SplitData, SplitData]:
    """(windows to pretrain on, the val split) for the typed `pretrain:` section."""
    splits = {name: load_split(windows, manifest, name) for name in ("train", "val", "test")}
    source = pretrain.source
    if source == "train_windows":
        train = splits["train"]
    elif source == "all_windows":
        train = concat_splits(list(splits.values()))
    else:
        if genome_dir is None:
            raise InputError("config", "pretrain.source", "genome needs the genome index (--genome-index)")
        train = random_genome_windows(
            genome_dir,
            pretrain.genome_windows,
            splits["train"].lengths,
            seed,
            tokenizer,
            summary["boundaries"],
        )
    if len(train) == 0:
        raise InputError(manifest, "split", "no windows to pretrain on")
    return train, splits["val"]


def concat_splits(parts: list[SplitData]) -> SplitData:
    return SplitData(
        ids=[i for p in parts for i in p.ids],
        gene_ids=[g for p in parts for g in p.gene_ids],
        sequences=[s for p in parts for s in p.sequences],
        labels=np.concatenate([p.labels for p in parts]),
        lengths=np.concatenate([p.lengths for p in parts]),
        token_lengths=np.concatenate([p.token_lengths for p in parts]),
        buckets=np.concatenate([p.buckets for p in parts]),
    )


def random_genome_windows(
    genome_dir: str, n: int, lengths: np.ndarray, seed: int, tokenizer, boundaries: list[int]
) -> SplitData:
    """`n` windows at uniform random genome positions, lengths drawn from the train windows'."""
    genome = Genome.open_cached(genome_dir)
    rng = np.random.default_rng(seed)
    starts, widths = np.empty(0, np.int64), np.empty(0, np.int64)
    for _ in range(SAMPLING_ROUNDS):
        more_starts, more_widths = draw_windows(genome, rng, 2 * (n - len(starts)), lengths)
        keep = [
            np.count_nonzero(genome.sequence[s : s + w] == ord("N")) <= MAX_N_FRACTION * w
            for s, w in zip(more_starts, more_widths)
        ]
        starts = np.concatenate([starts, more_starts[keep]])[:n]
        widths = np.concatenate([widths, more_widths[keep]])[:n]
        if len(starts) == n:
            break
    else:
        raise InputError(
            genome_dir,
            "pretrain.source",
            f"found only {len(starts)} of {n} random windows "
            f"with at most {MAX_N_FRACTION:.0%} N; is the genome mostly gaps?",
        )
    sequences = [bytes(genome.sequence[s : s + w]).decode("ascii") for s, w in zip(starts, widths)]
    token_lengths = window_token_lengths(tokenizer, lambda: sequences, widths)
    return SplitData(
        ids=[f"genome{i}" for i in range(n)],
        gene_ids=[""] * n,
        sequences=sequences,
        labels=np.zeros(n, dtype=np.int64),
        lengths=widths.astype(np.int64),
        token_lengths=np.asarray(token_lengths, dtype=np.int64),
        buckets=assign_buckets(token_lengths, boundaries).astype(np.int64),
    )


def draw_windows(genome: Genome, rng, count: int, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(genome offsets, widths) of `count` windows, chromosomes weighted by length."""
    chrom = rng.choice(len(genome), count, p=genome.lengths / genome.lengths.sum())
    widths = np.minimum(
        rng.choice(lengths if len(lengths) else np.array([200]), count), genome.lengths[chrom]
    )
    starts = genome.offsets[chrom] + (rng.random(count) * (genome.lengths[chrom] - widths + 1)).astype(
        np.int64
    )
    return starts, widths.astype(np.int64)
