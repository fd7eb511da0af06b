"""Genome scale without a GPU: the pipeline from annotation to windows on synthetic genomes of
growing size, scored by a tiny random-weight model with SpliceAI's interface (so the plumbing is
what is measured, not the model), sharded.

    python -m benchmarks.genome_scale [--sizes 30,100,300] [--shards 4] [--cores 2]

For each size, benchmarks/synthetic_genome.py writes the genome and annotation (cached in
`--work-dir`), then Snakemake runs index_genome -> annotate_sites -> score_base_model (one job per
shard) -> make_calls -> extract in a fresh folder. Prints, from Snakemake's own benchmark files
(psutil over each job's process tree): wall seconds and peak RSS per rule and per shard at each
size, then each rule's growth from the smallest size to the largest (time per genome Mb should
stay flat; peak RSS should depend on the largest chromosome or shard, not on the genome).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl

from benchmarks.common import load_line, print_table
from benchmarks.synthetic_genome import make_genome
from workflow_scripts.calling.keras_h5_writer import random_weights, spliceai_layers, write_keras_h5

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
    layers = spliceai_layers()
    weights = random_weights(layers, np.random.default_rng(1))
    weights["output"]["bias"][0] += NEITHER_BIAS
    return write_keras_h5(path, layers, weights)


def write_config(run: Path, inputs: Path, shards: int) -> Path:
    model = tiny_model(run / "tiny_model.h5")
    config = run / "scale.yaml"
    config.write_text(
        f"genome: {inputs / 'genome.fa'}\n"
        "calling:\n"
        "  start: annotation\n"
        f"  annotation: {inputs / 'genes.gtf'}\n"
        "  base_model:\n"
        f"    weights: {model}\n"
        f"    shards: {shards}\n"
        "    chunk_length: 20000\n"
        "    device: cpu\n"
    )
    return config


def run_pipeline(run: Path, config: Path, cores: int) -> float:
    snakefile = Path(__file__).resolve().parents[1] / "Snakefile"
    command = [
        str(Path(sys.executable).parent / "snakemake"),
        *TARGETS,
        "--snakefile",
        str(snakefile),
        "--directory",
        str(run),
        "--cores",
        str(cores),
        "--configfile",
        str(config),
    ]
    began = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"snakemake failed in {run}:\n{result.stderr[-4000:]}")
    return time.perf_counter() - began


def job_benchmarks(run: Path) -> pl.DataFrame:
    """One row per job: its benchmark file's path (the rule, and the shard or experiment), s, max_rss."""
    rows = []
    for path in sorted((run / "results" / "benchmarks").rglob("*.tsv")):
        record = pl.read_csv(path, separator="\t").row(0, named=True)
        job = str(path.relative_to(run / "results" / "benchmarks").with_suffix(""))
        rows.append({"job": job, "s": float(record["s"]), "max_rss_mb": float(record["max_rss"])})
    return pl.DataFrame(rows)


def rule_of(job: str) -> str:
    """score_base_model/2-of-4 -> score_base_model; fp_vs_tp/extract -> extract."""
    parts = job.split("/")
    return parts[-1] if parts[0] in ("fp_vs_tp", "fn_vs_tn") else parts[0]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="30,100,300", help="genome sizes in Mb, comma-separated")
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--work-dir", type=Path, default=Path("/tmp/errorseq-scale"))
    args = parser.parse_args(argv)
    sizes = [float(size) for size in args.sizes.split(",")]
    per_size = {}
    for mb in sizes:
        inputs, stats = genome_inputs(args.work_dir, mb)
        run = args.work_dir / f"run_{mb:g}mb_{args.shards}shards"
        subprocess.run(["rm", "-rf", str(run)], check=True)
        run.mkdir(parents=True)
        wall = run_pipeline(run, write_config(run, inputs, args.shards), args.cores)
        jobs = job_benchmarks(run)
        per_size[mb] = jobs.with_columns(pl.col("job").map_elements(rule_of, pl.String).alias("rule"))
        size = [f"{mb:g}", stats["genes"], stats["transcripts"]]
        rows = [[*size, r["job"], r["s"], r["max_rss_mb"]] for r in jobs.iter_rows(named=True)]
        print_table(
            f"Genome scale, {mb:g} Mb, tiny random model, {args.shards} shards, {args.cores} cores; {load_line()}",
            ["genome Mb", "genes", "transcripts", "job", "s", "peak RSS MB"],
            [*rows, [*size, "whole run (wall)", wall, float(jobs["max_rss_mb"].max())]],
        )
    print_growth(per_size, sizes)


def print_growth(per_size: dict[float, pl.DataFrame], sizes: list[float]) -> None:
    small, large = sizes[0], sizes[-1]
    rows = []
    for rule in per_size[large]["rule"].unique(maintain_order=True):
        s_small, s_large = (per_size[mb].filter(pl.col("rule") == rule) for mb in (small, large))
        if s_small.height == 0:
            continue
        time_small, time_large = s_small["s"].sum(), s_large["s"].sum()
        rss_large = float(s_large["max_rss_mb"].max())
        rows.append(
            [
                rule,
                time_small / small,
                time_large / large,
                (time_large / max(time_small, 1e-9)) / (large / small),
                float(s_small["max_rss_mb"].max()),
                rss_large,
                "yes" if rss_large < RSS_TARGET_MB else "NO",
            ]
        )
    print_table(
        f"Growth from {small:g} to {large:g} Mb (time ratio / size ratio: 1 = linear)",
        [
            "rule",
            f"s per Mb at {small:g}",
            f"s per Mb at {large:g}",
            "time growth / size growth",
            f"peak RSS MB at {small:g}",
            f"peak RSS MB at {large:g}",
            f"under {RSS_TARGET_MB} MB",
        ],
        rows,
    )


if __name__ == "__main__":
    main()
