"""errorseq's side: `base_data`'s blocks of the split's genes, then `train_base` (its rule's entry
point, benchmarks/train_base/run.py), as a SideRun. Where those modules are not in this checkout,
`SideNotAvailable`: no number stands in.

The blocks are base_data's own (its library: real flanking DNA, test cores masked in every other
block's flanks), labelled from each gene's longest transcript as OpenSpliceAI's create-data labels
its windows (the held-out ones included), with the split forced to the benchmark's genes: every
gene is its own cluster and each block takes the split of its genes (merge_gap 0: only overlapping
genes of one strand share a block; genes of two splits in one block are refused). The
optimiser matches OpenSpliceAI's transfer: AdamW 1e-4, weight decay 0.01, no warm-up, no gradient
clipping, every unit trained. The learning rate follows OpenSpliceAI's over the same epochs: with
its cosine schedule (warm restarts every 5 epochs, down to 1e-5, stepped per batch) a run of e ≤ 5
epochs ends at `peer_end_lr(e)`, so train_base's cosine over the run ends there too (2 epochs:
1e-4 → 6.9e-5; an earlier version decayed to 1e-5 whatever the epochs, about 25% less learning
rate summed over a 2-epoch run than OpenSpliceAI applied). Batches: blocks under a token budget
of 60,000 input nt (train_base's own batching, what is being compared): on D. melanogaster chr4's
short genes 11 optimizer steps an epoch at 1.7% padding, against OpenSpliceAI's 5 batches of 12
windows (a budget of 120,000: 6 steps at 7.6% padding).
"""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace

import polars as pl

from benchmarks.base_training.genes import SPLITS
from benchmarks.base_training.sides import EpochCost, Setup, SideNotAvailable, SideRun
from workflow_scripts.calling.annotation import build_site_tables
from workflow_scripts.calling.gff import read_annotation
from workflow_scripts.data.fasta import read_fasta
from workflow_scripts.errors import InputError
from workflow_scripts.io_utils import write_json
from workflow_scripts.progress import Console

LR, PEER_MIN_LR, PEER_PERIOD = 1e-4, 1e-5, 5  # transfer's AdamW and CosineAnnealingWarmRestarts
SETTINGS = {"lr": LR, "weight_decay": 0.01, "warmup_fraction": 0.0, "grad_clip": 0.0, "token_budget": 60_000}
MAX_CORE = 50_000


def peer_end_lr(epochs: int, schedule: str) -> float:
    """OpenSpliceAI's learning rate after `epochs` epochs of its per-batch cosine with warm
    restarts (past one period, its lowest: 1e-5); with MultiStepLR (halved at each of the last 4
    epochs) the lowest it reaches."""
    if schedule != "cosine" or epochs >= PEER_PERIOD:
        return LR / 16 if schedule != "cosine" else PEER_MIN_LR
    return PEER_MIN_LR + (LR - PEER_MIN_LR) * (1 + math.cos(math.pi * epochs / PEER_PERIOD)) / 2


def settings_for(epochs: int, schedule: str) -> dict:
    """train_base's settings: the peer's optimiser, the cosine ending where the peer's lr ends."""
    return {**SETTINGS, "min_lr_ratio": round(peer_end_lr(epochs, schedule) / LR, 4), "tensorboard": False}


def libraries():
    try:
        from benchmarks.train_base.run import time_train_base
        from workflow_scripts.base_training import dataset
        from workflow_scripts.training.base.blocks import BaseDataFiles
    except ImportError as missing:
        raise SideNotAvailable(
            f"train_base not available on this branch ({missing.name} missing): errorseq's side needs the "
            "base_data and train_base rules (issue 46); benchmarks/base_training/errorseq.py runs them"
        ) from None
    return time_train_base, dataset, BaseDataFiles


def forced_splits(blocks: pl.DataFrame, split_of: dict[str, str], source: str) -> pl.Series:
    """Each block's split: that of its genes, which must agree."""
    chosen = []
    for genes in blocks["genes"].to_list():
        found = {split_of[gene] for gene in genes}
        if len(found) != 1:
            raise InputError(source, "genes", f"one block holds genes of {sorted(found)}: {', '.join(genes)}")
        chosen.append(found.pop())
    return pl.Series("split", chosen)


def longest_as_canonical(annotation):
    """Each gene's transcript of the widest exon span marked canonical, the others not: the labels
    of OpenSpliceAI's create-data (one transcript per gene, the longest), which its held-out
    windows are scored against."""
    spans: dict[str, list[int]] = {}
    for _chrom, start, end, _strand, transcript, *_ in annotation.exons:
        low, high = spans.get(transcript, [start, end])
        spans[transcript] = [min(low, start), max(high, end)]
    best: dict[str, tuple[int, str]] = {}
    for transcript, (start, end) in spans.items():
        gene = annotation.transcripts[transcript]["gene_id"]
        if gene not in best or end - start > best[gene][0]:
            best[gene] = (end - start, transcript)
    chosen = {transcript for _, transcript in best.values()}
    for transcript, row in annotation.transcripts.items():
        row["canonical"] = transcript in chosen
    return annotation


def build_base_data(setup: Setup, folder: Path, dataset, files_type):
    """base_data's four files for the split's genes in `folder` (kept: a rerun reuses them)."""
    files = files_type(
        *(str(folder / name) for name in ("blocks.parquet", "sequence.npy", "labels.npy", "manifest.json"))
    )
    if Path(files.manifest).exists():
        return files
    genome, _ = read_fasta(setup.genome, iupac="to_n")
    split_of = {gene: split for split in SPLITS for gene in setup.split.of(split)}
    tables = build_site_tables(
        longest_as_canonical(read_annotation(setup.annotation)),
        biotypes="all",
        transcripts="canonical",
        chrom_lengths=genome.chrom_lengths(),
    )
    genes = tables.genes.filter(pl.col("gene_id").is_in(list(split_of)))
    sites = tables.sites.filter(pl.col("gene_id").is_in(list(split_of)))
    clusters = pl.DataFrame({"gene_id": genes["gene_id"], "gene_cluster": range(genes.height)})
    settings = dataset.Settings(
        context=setup.flank,
        max_core=MAX_CORE,
        merge_gap=0,
        split="clusters",
        fractions={"train": 0.8, "validation": 0.1, "test": 0.1},
        test_chromosomes=[],
        validation_chromosomes=[],
        seed=setup.seed,
        canonical_only=False,
    )
    blocks = dataset.plan_blocks(genes, clusters, genome, settings)
    blocks = blocks.with_columns(forced_splits(blocks, split_of, str(setup.annotation)))
    paths = SimpleNamespace(out_sequence=files.sequence, out_labels=files.labels)
    counts = dataset.write_arrays(blocks, sites, genome, settings, paths, Console(None))
    dataset.write_blocks(blocks, files.blocks)
    data = dataset.open_base_data(files.blocks, files.sequence, files.labels)
    write_json(
        files.manifest,
        {
            "format": 1,
            "context": setup.flank,
            "half_context": setup.flank // 2,
            "max_core": MAX_CORE,
            "merge_gap": 0,
            "canonical_only": False,
            "genome": {"name": setup.genome.name},
            "annotation": {"name": setup.annotation.name},
            "split": {"rule": "given genes (benchmarks/base_training)", "seed": setup.seed},
            "counts": dataset.split_counts(blocks, data.labels),
            "padding_nt": counts["padding_nt"],
            "masked_nt": counts["masked_nt"],
        },
    )
    return files


def errorseq_side(setup: Setup, work: Path) -> SideRun:
    """base_data's blocks of the split, then train_base from the same start weights."""
    time_train_base, dataset, files_type = libraries()
    files = build_base_data(setup, work / "base_data", dataset, files_type)
    timing = time_train_base(
        files,
        work / "train_base",
        context=setup.flank,
        init=setup.weights,
        epochs=setup.epochs,
        seed=setup.seed,
        procs=1,
        threads=setup.threads,
        settings=settings_for(setup.epochs, setup.schedule),
    )
    costs = [EpochCost(e.epoch, e.labelled_nt, e.input_nt, e.cpu_s, e.wall_s) for e in timing.epochs]
    notes = [f"errorseq: {line}" for line in [timing.describe, *timing.notes] if line]
    notes.append(
        f"errorseq: train_base job {timing.job_wall_s:.0f} s (torchrun start, data, validation, export); "
        f"schedule: cosine over the run from {LR:g} to {peer_end_lr(setup.epochs, setup.schedule):.2g} "
        "(where OpenSpliceAI's ends after as many epochs)"
    )
    peak = max((e.peak_rss_mib for e in timing.epochs), default=float("nan"))
    return SideRun("errorseq train_base", costs, peak, list(timing.checkpoints), notes)
