"""Genome scale without a GPU: the pipeline from annotation to windows on synthetic genomes of
growing size, scored by a tiny random-weight model with SpliceAI's interface (so the plumbing is
what is measured, not the model), sharded.

    python -m benchmarks.scale.genome_scale [--sizes 30,100,300] [--shards 4] [--cores 2] [--resume]

For each size, benchmarks/scale/synthetic_genome.py writes the genome and annotation (cached in
`--work-dir`), then Snakemake runs index_genome -> annotate_sites -> score_base_model (one job per
shard) -> make_calls -> extract in a fresh folder. Prints, from Snakemake's own benchmark files
(psutil over each job's process tree): wall seconds and peak RSS per rule and per shard at each
size, then each rule's growth from the smallest size to the largest (time per genome Mb should
stay flat; peak RSS should depend on the largest chromosome or shard, not on the genome).
`--resume` goes on from the run folders an interrupted invocation left: its finished shards are
not scored again (the 300 Mb size takes about an hour on 2 cores).
"""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path

import numpy as np
import polars as pl

from benchmarks.runner import job_benchmarks, snakemake, write_config
from benchmarks.scale.synthetic_genome import make_genome
from benchmarks.tables import load_line, print_table
from testkit.keras_h5_writer import random_weights, spliceai_layers, write_keras_h5

RSS_TARGET_MB = 3_000
NEITHER_BIAS = 4.0  # added to the output's "neither" logit: ~0.4% of positions score >= 0.5 as
# donor and ~0.2% as acceptor, the order of a real base model's predictions (unshifted random
# weights flag ~40%, and the calls, not the plumbing, would then be what is measured)
TARGETS = ("results/fp_vs_tp/windows.parquet", "results/fn_vs_tn/windows.parquet")


def genome_inputs(work_dir: Path, mb: float) -> tuple[Path, dict]:
    folder = work_dir / f"genome_{mb:g}mb"
    if not (folder / "stats.json").exists():
        (folder / "stats.json").write_text(json.dumps(make_genome(mb, folder)))
    return folder, json.loads((folder / "stats.json").read_text())


def tiny_model(path: Path) -> Path:
    """Seeded, so the same file every time; kept when there, so a resumed run's shards stay done."""
    if path.exists():
        return path
    layers = spliceai_layers()
    weights = random_weights(layers, np.random.default_rng(1))
    weights["output"]["bias"][0] += NEITHER_BIAS
    return write_keras_h5(path, layers, weights)


def write_scale_config(run: Path, inputs: Path, shards: int) -> Path:
    model = tiny_model(run / "tiny_model.h5")
    calling = {
        "start": "annotation",
        "annotation": str(inputs / "genes.gtf"),
        "base_model": {"weights": str(model), "shards": shards, "chunk_length": 20000, "device": "cpu"},
    }
    return write_config(run, {"genome": str(inputs / "genome.fa"), "calling": calling}, "scale.yaml")


def rule_of(job: str) -> str:
    """score_base_model/2-of-4 -> score_base_model; fp_vs_tp/extract -> extract."""
    parts = job.split("/")
    return parts[-1] if parts[0] in ("fp_vs_tp", "fn_vs_tn") else parts[0]


def run_size(mb: float, args: argparse.Namespace) -> pl.DataFrame:
    """The pipeline on one genome size in a fresh folder; prints its jobs, returns them with their rule."""
    inputs, stats = genome_inputs(args.work_dir, mb)
    run = args.work_dir / f"run_{mb:g}mb_{args.shards}shards"
    if not args.resume:
        subprocess.run(["rm", "-rf", str(run)], check=True)
    run.mkdir(parents=True, exist_ok=True)
    config = write_scale_config(run, inputs, args.shards)
    # resumed: a job already done stays done whatever changed in errorseq since (mtime only)
    extra = ("--rerun-triggers", "mtime") if args.resume else ()
    wall = snakemake(run, list(TARGETS), config, args.cores, extra=extra)
    jobs = job_benchmarks(run)
    size = [f"{mb:g}", stats["genes"], stats["transcripts"]]
    rows = [[*size, r["job"], r["s"], r["cpu_s"], r["max_rss_mb"]] for r in jobs.iter_rows(named=True)]
    whole = "this invocation (wall; resumed)" if args.resume else "whole run (wall)"
    print_table(
        f"Genome scale, {mb:g} Mb, tiny random model, {args.shards} shards, {args.cores} cores; {load_line()}",
        ["genome Mb", "genes", "transcripts", "job", "s", "CPU s", "peak RSS MB"],
        [*rows, [*size, whole, wall, float(jobs["cpu_s"].sum()), float(jobs["max_rss_mb"].max())]],
    )
    return jobs.with_columns(pl.col("job").map_elements(rule_of, pl.String).alias("rule"))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="30,100,300", help="genome sizes in Mb, comma-separated")
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--work-dir", type=Path, default=Path("/tmp/errorseq-scale"))
    parser.add_argument(
        "--resume",
        action="store_true",
        help="keep each size's run folder: jobs already done (shards, rules) are not redone",
    )
    args = parser.parse_args(argv)
    sizes = [float(size) for size in args.sizes.split(",")]
    per_size = {mb: run_size(mb, args) for mb in sizes}
    print_growth(per_size, sizes)


def print_growth(per_size: dict[float, pl.DataFrame], sizes: list[float]) -> None:
    """Per rule: seconds per genome Mb at the smallest and largest size, and CPU time's growth over
    the size's (CPU seconds, since wall seconds follow whatever else the machine was doing)."""
    small, large = sizes[0], sizes[-1]
    rows = []
    for rule in per_size[large]["rule"].unique(maintain_order=True):
        s_small, s_large = (per_size[mb].filter(pl.col("rule") == rule) for mb in (small, large))
        if s_small.height == 0:
            continue
        cpu_small, cpu_large = s_small["cpu_s"].sum(), s_large["cpu_s"].sum()
        rss_large = float(s_large["max_rss_mb"].max())
        rows.append(
            [
                rule,
                s_small["s"].sum() / small,
                s_large["s"].sum() / large,
                (cpu_large / max(cpu_small, 1e-9)) / (large / small),
                float(s_small["max_rss_mb"].max()),
                rss_large,
                "yes" if rss_large < RSS_TARGET_MB else "NO",
            ]
        )
    print_table(
        f"Growth from {small:g} to {large:g} Mb (CPU time ratio / size ratio: 1 = linear)",
        [
            "rule",
            f"s per Mb at {small:g}",
            f"s per Mb at {large:g}",
            "CPU time growth / size growth",
            f"peak RSS MB at {small:g}",
            f"peak RSS MB at {large:g}",
            f"under {RSS_TARGET_MB} MB",
        ],
        rows,
    )


if __name__ == "__main__":
    main()
