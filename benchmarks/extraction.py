"""Window extraction: windows per second from a FASTA of >= 100 Mb, and the extract rule on 1M calls.

    python -m benchmarks.extraction [--genome-mb 120] [--windows 1000000] [--calls 1000000]

Windows are 201 nt (flank 100), half on the minus strand (reverse-complemented).
Compared with a per-row pyfaidx loop (`benchmarks/requirements.txt`), the usual
user code. The extract rule runs as the workflow runs it (`python -m
workflow_scripts.rules.extract` on a cached genome index); its peak memory is reported.
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

from benchmarks.runner import run_with_peak_memory
from benchmarks.tables import best_of, load_line, print_table
from workflow_scripts.command_line import path_flags
from workflow_scripts.data.fasta import load_fasta
from workflow_scripts.data.genome import Genome

WIDTH = 201
N_CHROMOSOMES = 4
LINE = 60


def write_fasta(path: Path, total_mb: float, seed: int = 0) -> None:
    """Random ACGT chromosomes with 60-nt lines (what pyfaidx expects)."""
    rng = np.random.default_rng(seed)
    length = int(total_mb * 1e6 / N_CHROMOSOMES) // LINE * LINE
    with open(path, "wb") as handle:
        for chrom in range(N_CHROMOSOMES):
            bases = rng.choice(np.frombuffer(b"ACGT", np.uint8), length).reshape(-1, LINE)
            lines = np.concatenate([bases, np.full((len(bases), 1), ord("\n"), np.uint8)], axis=1)
            handle.write(f">chr{chrom + 1}\n".encode())
            handle.write(lines.tobytes())


def prepared_genome(work: Path, total_mb: float) -> Path:
    work.mkdir(parents=True, exist_ok=True)
    fasta = work / f"genome_{total_mb:g}mb.fa"
    if not (work / "index" / "index.tsv").exists() or not fasta.exists():
        write_fasta(fasta, total_mb)
        load_fasta(fasta).save_cached(work / "index")
        for stale in work.glob("*.fai"):
            stale.unlink()
    return fasta


def random_windows(genome: Genome, n: int, seed: int = 1):
    rng = np.random.default_rng(seed)
    chrom = rng.integers(0, len(genome), n)
    centre = (rng.random(n) * genome.lengths[chrom]).astype(np.int64)
    starts = np.maximum(centre - WIDTH // 2, 0)
    ends = np.minimum(centre + WIDTH // 2 + 1, genome.lengths[chrom])
    return chrom, starts, ends, rng.random(n) < 0.5


def pyfaidx_rate(fasta: Path, genome: Genome, n: int) -> float | None:
    try:
        import pyfaidx
    except ImportError:
        return None
    reader = pyfaidx.Fasta(str(fasta), sequence_always_upper=True)
    chrom, starts, ends, minus = random_windows(genome, n, seed=2)
    names = genome.names
    began = time.perf_counter()
    out = []
    for c, s, e, m in zip(chrom.tolist(), starts.tolist(), ends.tolist(), minus.tolist()):
        record = reader[names[c]][s:e]
        out.append((-record).seq if m else record.seq)
    return n / (time.perf_counter() - began)


def calls_table(genome: Genome, n: int, path: Path) -> None:
    chrom, starts, ends, minus = random_windows(genome, n, seed=3)
    rng = np.random.default_rng(4)
    pl.DataFrame(
        {
            "gene_id": [f"g{i}" for i in rng.integers(0, max(n // 5, 1), n)],
            "chrom": np.asarray(genome.names)[chrom],
            "position": (starts + ends) // 2 + 1,
            "strand": np.where(minus, "-", "+"),
            "splice_type": np.where(rng.random(n) < 0.5, "donor", "acceptor"),
            "pred_type": np.where(rng.random(n) < 0.5, "TN", "FN"),
        }
    ).write_parquet(path)


def extract_rule(work: Path, genome: Genome, n: int) -> tuple[float, float]:
    """(wall seconds, peak RSS MiB) of `python -m workflow_scripts.rules.extract` on n calls."""
    calls = work / f"calls_{n}.parquet"
    if not calls.exists():
        calls_table(genome, n, calls)
    config = {
        "experiment": {"name": "bench", "error_label": "FN", "correct_label": "TN"},
        "window": {"flank": WIDTH // 2},
    }
    paths = path_flags({"calls": calls}, {"windows": work / f"windows_{n}.parquet"})
    args = ["--genome", str(work / "index"), *paths, "--config", json.dumps(config)]
    seconds, peak = run_with_peak_memory("workflow_scripts.rules.extract", args)
    return seconds, peak["VmHWM"]


def python_start_seconds() -> float:
    began = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import polars, numpy, workflow_scripts.rules.extract"], check=True)
    return time.perf_counter() - began


GATHERS = {
    "errorseq gather → padded uint8 rows (gather_rows)": "gather_rows",
    "errorseq gather → flat bytes + offsets (gather_windows)": "gather_windows",
    "errorseq gather → polars strings (window_strings, what extract uses)": "window_strings",
}


def gather_rows(fasta: Path, genome: Genome, n: int, pyfaidx_windows: int) -> list[list]:
    """Windows per second of each gather (best of 3) and of pyfaidx's loop."""
    windows = random_windows(genome, n)
    genome.gather_rows(*[a[:1000] for a in windows])  # page in the code paths
    seconds = {name: best_of(3, getattr(genome, method), *windows)[0] for name, method in GATHERS.items()}
    faidx = pyfaidx_rate(fasta, genome, pyfaidx_windows)
    rows = [
        ["pyfaidx, one window per call (the usual loop)", faidx or "not installed", 1.0 if faidx else "-"]
    ]
    return rows + [[name, n / s, n / s / faidx if faidx else "-"] for name, s in seconds.items()]


def rule_rows(work: Path, genome: Genome, calls: int) -> list[list]:
    """The extract rule on `calls` (and a quarter of it, for the memory per window)."""
    startup = python_start_seconds()
    rows = []
    sizes = {calls // 4, calls} if calls >= 100_000 else {calls}
    for n in sorted(sizes):
        seconds, peak = extract_rule(work, genome, n)
        rows.append([f"{n:,} calls (half minus strand)", seconds, seconds - startup, peak])
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--genome-mb", type=float, default=120)
    parser.add_argument("--windows", type=int, default=1_000_000)
    parser.add_argument("--calls", type=int, default=1_000_000)
    parser.add_argument("--pyfaidx-windows", type=int, default=20_000)
    parser.add_argument("--work-dir", default="/tmp/errorseq-bench", help="genome and calls are cached here")
    args = parser.parse_args(argv)
    work = Path(args.work_dir)
    fasta = prepared_genome(work, args.genome_mb)
    genome = Genome.open_cached(work / "index")
    print_table(
        f"Extraction: 201-nt windows, both strands, {genome.lengths.sum() / 1e6:.0f} Mb genome ({load_line()})",
        ["method", "windows / s", "× pyfaidx"],
        gather_rows(fasta, genome, args.windows, args.pyfaidx_windows),
    )
    print_table(
        f"extract rule (python -m workflow_scripts.rules.extract, genome index cached; {load_line()})",
        ["input", "wall s", "s after start-up + imports", "peak RSS MiB"],
        rule_rows(work, genome, args.calls),
    )


if __name__ == "__main__":
    main()
