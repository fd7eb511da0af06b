"""rescore_sites (calling.start regions): peak memory against the nt scored, beside the mem_mb the
rule asks for (workflow_scripts/workflow/resources.py, issue 49).

    python -m benchmarks.rescore_memory [--mnt 1 4 16] [--chromosomes 1] [--work-dir /tmp/...]

Each run is the rule's entry point (`python -m workflow_scripts.rules.rescore_sites`) in a process
of its own on a synthetic genome of `--chromosomes` random chromosomes holding `--mnt` million nt
of both strands together, with a synthetic scores table: a low background and a local peak in
100 nt, either type (the candidate density of OpenSpliceAI's scores on A. arenosa: 6,257 in 600,000), re-scored
by the shipped tree `builtin:atha-chr1-openspliceai-arabidopsis` (no deep models: those score
candidates in chunks of a fixed size). Peak RSS (VmHWM) and peak anonymous RSS, sampled by the
process itself (benchmarks/runner.py), against the nt and the candidates; the last column is what
the rule would ask SLURM for.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import numpy as np
import polars as pl

from benchmarks.runner import run_with_peak_memory
from benchmarks.tables import load_line, print_table
from workflow_scripts.calling.scoring import SCORE_SCHEMA
from workflow_scripts.command_line import path_flags
from workflow_scripts.config.sections import section_defaults
from workflow_scripts.data.genome import Genome
from workflow_scripts.rescorers import FOLDER
from workflow_scripts.workflow.resources import ScoredNt, rescore_mem_mb

RESCORER = "atha-chr1-openspliceai-arabidopsis"
PEAK_EVERY = 200  # one candidate peak per this many nt and splice type: 1 in 100 nt in all


def synthetic_inputs(folder: Path, nt: int, chromosomes: int, seed: int = 0) -> dict[str, object]:
    """Genome index, regions table and scores table of `nt` nt (both strands) in `folder`."""
    rng = np.random.default_rng(seed)
    length = nt // (2 * chromosomes)
    names = [f"chr{i + 1}" for i in range(chromosomes)]
    bases = rng.choice(np.frombuffer(b"ACGT", np.uint8), size=length * chromosomes)
    Genome(names, np.array([length] * chromosomes), bases).save_cached(folder / "genome")
    regions, tables = [], []
    for name in names:
        for strand in "+-":
            region = f"{name}:1-{length}:{strand}"
            regions.append((region, name, 1, length, strand, "region"))
            scores = {}
            for kind in ("donor", "acceptor"):
                values = rng.uniform(0, 0.004, length).astype(np.float32)
                peaks = rng.choice(length, length // PEAK_EVERY, replace=False)
                values[peaks] = rng.uniform(0.005, 1.0, peaks.size).astype(np.float32)
                scores[kind] = values
            tables.append(
                pl.DataFrame(
                    {
                        "gene_id": [region] * length,
                        "chrom": [name] * length,
                        "strand": [strand] * length,
                        "position": np.arange(1, length + 1),
                        **scores,
                    },
                    schema=SCORE_SCHEMA,
                )
            )
    pl.concat(tables).write_parquet(folder / "scores.parquet")
    pl.DataFrame(
        regions, schema=["gene_id", "chrom", "start", "end", "strand", "biotype"], orient="row"
    ).write_parquet(folder / "regions.parquet")
    return {"scores": [folder / "scores.parquet"], "regions": folder / "regions.parquet"}


def measure(work: Path, nt: int, chromosomes: int) -> list:
    folder = work / f"{nt}-{chromosomes}"
    folder.mkdir(parents=True, exist_ok=True)
    inputs = {**synthetic_inputs(folder, nt, chromosomes), "transfer": FOLDER / RESCORER}
    outputs = {name: folder / f"out.{name}" for name in ("calls", "bed", "gff3", "report", "html")}
    config = {name: section_defaults(name) for name in ("calling", "sites", "evaluate")}
    args = [*path_flags(inputs, outputs), "--genome", str(folder / "genome"), "--config", json.dumps(config)]
    seconds, peak = run_with_peak_memory("workflow_scripts.rules.rescore_sites", args, 0.01)
    candidates = json.loads((folder / "out.report").read_text())["counts"]["candidates"]
    return [
        f"{nt / 1e6:.1f}",
        chromosomes,
        f"{candidates:,}",
        f"{seconds:.1f}",
        f"{peak['VmHWM']:,.0f}",
        f"{peak['RssAnon']:,.0f}",
        f"{rescore_mem_mb(ScoredNt(nt, nt // chromosomes)):,}",
    ]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mnt", type=float, nargs="+", default=[1, 4, 16], help="million nt, both strands")
    parser.add_argument("--chromosomes", type=int, default=1)
    parser.add_argument("--work-dir", type=Path, default=None)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        work = args.work_dir or Path(scratch)
        rows = [measure(work, int(mnt * 1e6), args.chromosomes) for mnt in args.mnt]
    print_table(
        f"rescore_sites' memory against the nt scored (tree re-scorer, one process) · {load_line()}",
        ["M nt", "chromosomes", "candidates", "wall s", "peak RSS MiB", "peak anon MiB", "mem_mb asked"],
        rows,
    )


if __name__ == "__main__":
    main()
