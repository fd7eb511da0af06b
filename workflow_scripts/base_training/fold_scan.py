"""A whole-region scan scored out of fold: every position by a fold model that never trained on its labels.

K base_data folds (base_data.folds) train K models; fold k's test blocks are the genes of fold k's
clusters, and no other fold's model saw them. Over a whole region (calling.regions with calling.start
annotation: both strands, every position) each position is scored by one fold's model:

- inside a test block's core of fold k (a gene span of its strand, merged genes and the gaps between
  them included): fold k's model, the only one that never trained on those labels;
- outside every block core of its strand (between genes, or antisense of a gene only): no fold's
  model trained on a label there (base_data labels the cores only; flanks are context), so any is
  out of fold; it takes the fold of the nearest core on its chromosome and strand (ties: the one on
  its left), so the scan switches models only between genes.

Each run of positions of one fold is scored as one stretch with the model's context of real DNA on
each side (N only past a chromosome end), the − strand reverse-complemented, as base_data builds its
blocks. The input scan is a run folder whose score_base_model shards hold the region's rows
(results/base_model/shards/<i>-of-<n>.parquet and its .regions.json); the output folder gets the
same rows with the fold models' donor/acceptor in their place, and records naming the fold models'
files, so site_calls counts them as it counts the base's (`snakemake sites` in a copy of the run).

    python -m workflow_scripts.base_training.fold_scan --folds runs/ft/fold0 ... runs/ft/fold3 \
        --models results/train_base/models --scan runs/base_scan --out runs/ft_scan
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import polars as pl
import torch

from workflow_scripts.base_training.arrays import encode, reverse_complement
from workflow_scripts.base_training.evaluate import BaseModel, block_probabilities, load_models
from workflow_scripts.base_training.out_of_fold import resolve
from workflow_scripts.calling.known_models import describe_weights
from workflow_scripts.calling.model_files import model_family, weight_files
from workflow_scripts.data.fasta import open_genome
from workflow_scripts.data.genome import Genome
from workflow_scripts.errors import InputError, run_cli
from workflow_scripts.io_utils import sha256_file, write_json, write_parquet
from workflow_scripts.progress import Progress

STRETCH_NT = 100_000  # the longest core one forward pass scores (memory)


def test_cores(folds: list[Path]) -> pl.DataFrame:
    """chrom, strand, core_start, core_end (0-based, end exclusive) and fold of every test block."""
    frames = []
    for k, fold in enumerate(folds):
        blocks = pl.read_parquet(fold / "results" / "base_data" / "blocks.parquet")
        frames.append(
            blocks.filter(pl.col("split") == "test")
            .select("chrom", "strand", "core_start", "core_end")
            .with_columns(pl.lit(k, pl.Int64).alias("fold"))
        )
    cores = pl.concat(frames).sort("chrom", "strand", "core_start")
    for (chrom, strand), group in cores.group_by(["chrom", "strand"]):
        starts, ends = group["core_start"].to_numpy(), group["core_end"].to_numpy()
        if np.any(starts[1:] < ends[:-1]):
            raise InputError(
                folds[0], "base_data folds", f"test cores of two folds overlap on {chrom} {strand}"
            )
    return cores


def assign(positions: np.ndarray, cores: pl.DataFrame) -> np.ndarray:
    """Fold per 0-based position of one chromosome and strand: the core holding it, else the
    nearest core (ties: the left one); fold 0 where the strand holds no core."""
    if cores.height == 0:
        return np.zeros(positions.size, dtype=np.int64)
    starts, ends = cores["core_start"].to_numpy(), cores["core_end"].to_numpy()
    folds = cores["fold"].to_numpy()
    right = np.searchsorted(starts, positions, side="right")  # first core starting after p
    left = np.clip(right - 1, 0, len(starts) - 1)
    nxt = np.clip(right, 0, len(starts) - 1)
    to_left = np.where(right > 0, np.maximum(positions - (ends[left] - 1), 0), np.iinfo(np.int64).max)
    to_right = np.where(right < len(starts), starts[nxt] - positions, np.iinfo(np.int64).max)
    return np.where(to_left <= to_right, folds[left], folds[nxt]).astype(np.int64)


def runs(values: np.ndarray, positions: np.ndarray) -> list[tuple[int, int]]:
    """(first, end) index ranges of equal values over contiguous positions."""
    cut = np.flatnonzero((np.diff(values) != 0) | (np.diff(positions) != 1)) + 1
    edges = np.r_[0, cut, values.size]
    return [(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:], strict=True)]


def stretch_scores(
    model: BaseModel, genome: Genome, chrom: str, strand: str, start: int, end: int
) -> np.ndarray:
    """(end - start, 3) [neither, acceptor, donor] of 0-based genomic [start, end), in genomic order."""
    half = model.context // 2
    index = genome.index_of[chrom]
    offset, length = int(genome.offsets[index]), int(genome.lengths[index])
    lo, hi = max(start - half, 0), min(end + half, length)
    codes = np.full(end - start + 2 * half, 4, dtype=np.int8)
    codes[lo - (start - half) : hi - (start - half)] = encode(
        np.asarray(genome.sequence[offset + lo : offset + hi])
    )
    if strand == "-":
        return block_probabilities(model, reverse_complement(codes), half, torch.device("cpu"))[::-1]
    return block_probabilities(model, codes, half, torch.device("cpu"))


def score_rows(
    rows: pl.DataFrame, cores: pl.DataFrame, models: list[BaseModel], genome: Genome, log
) -> pl.DataFrame:
    """`rows` (chrom, strand, position 1-based, donor, acceptor) with donor/acceptor of the fold models
    and a `fold` column; a position in several rows (overlapping regions) is scored once."""
    keys = rows.select("chrom", "strand", "position").unique().sort("chrom", "strand", "position")
    progress = Progress("fold_scan", keys.height, "nt", log=log)
    parts = []
    for (chrom, strand), group in keys.group_by(["chrom", "strand"], maintain_order=True):
        positions = group["position"].to_numpy().astype(np.int64) - 1
        fold = assign(positions, cores.filter((pl.col("chrom") == chrom) & (pl.col("strand") == strand)))
        scores = np.zeros((positions.size, 3), dtype=np.float32)
        for first, end in runs(fold, positions):
            for a in range(first, end, STRETCH_NT):
                b = min(a + STRETCH_NT, end)
                scores[a:b] = stretch_scores(
                    models[fold[a]],
                    genome,
                    str(chrom),
                    str(strand),
                    int(positions[a]),
                    int(positions[b - 1]) + 1,
                )
                progress.advance(b - a)
        parts.append(
            group.with_columns(
                pl.Series("acceptor_new", scores[:, 1]),
                pl.Series("donor_new", scores[:, 2]),
                pl.Series("fold", fold),
            )
        )
    progress.finish()
    scored = pl.concat(parts)
    out = rows.join(scored, on=["chrom", "strand", "position"], how="left", maintain_order="left")
    return out.with_columns(
        pl.col("donor_new").cast(rows.schema["donor"]).alias("donor"),
        pl.col("acceptor_new").cast(rows.schema["acceptor"]).alias("acceptor"),
    ).select([*rows.columns, "fold"])


def weights_record(paths: list[Path]) -> dict:
    """The fold models' files as a shard's regions.json records its weights (evaluation/records.py)."""
    files = [{"path": p.name, "bytes": p.stat().st_size, "sha256": sha256_file(p)} for p in paths]
    return {"source": "weights", "files": files, **describe_weights(files, model_family(paths))}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folds", nargs="+", required=True, type=Path, help="fold folders, fold 0 first")
    parser.add_argument(
        "--models", required=True, help="model folder in each fold folder (the mean of its files)"
    )
    parser.add_argument("--scan", required=True, type=Path, help="a whole-region run folder with its shards")
    parser.add_argument("--out", required=True, type=Path, help="shards folder to write")
    args = parser.parse_args(argv)
    cores = test_cores(args.folds)
    files = [[str(p) for p in weight_files(resolve(fold, args.models))] for fold in args.folds]
    models = [load_models(group, torch.device("cpu"))[0] for group in files]
    genome = open_genome(args.scan / "results" / "genome")
    shards = sorted((args.scan / "results" / "base_model" / "shards").glob("*-of-*.parquet"))
    if not shards:
        raise InputError(args.scan, "--scan", "no results/base_model/shards/<i>-of-<n>.parquet")
    args.out.mkdir(parents=True, exist_ok=True)
    record = weights_record([Path(p) for group in files for p in group])
    for shard in shards:
        rows = pl.read_parquet(shard)
        scored = (
            score_rows(rows, cores, models, genome, sys.stderr)
            if rows.height
            else rows.with_columns(pl.lit(0, pl.Int64).alias("fold"))
        )
        counts = scored.group_by("fold").len().sort("fold").rows() if scored.height else []
        print(f"fold_scan: {shard.name} {scored.height:,} rows, per fold {counts}", file=sys.stderr)
        write_parquet(scored.drop("fold"), args.out / shard.name)
        regions = json.loads(
            shard.with_name(shard.name.removesuffix(".parquet") + ".regions.json").read_text()
        )
        write_json(args.out / shard.name.replace(".parquet", ".regions.json"), {**regions, "weights": record})


if __name__ == "__main__":
    run_cli(main)
