"""Memory of sharded scores on 4.8 M positions: reading them, and the whole make_calls rule, peak
with the largest chromosome, not the genome. The shard plan and gathering:
tests/unit/test_shards.py."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import polars as pl

from workflow_scripts.command_line import path_flags
from workflow_scripts.data.genome import Genome

# One polars thread, and polars' jemalloc returning freed pages at once: with its default decay
# (pages kept ~10 s) the same read peaked at 317-403 MB from run to run on a loaded machine.
MEASURED_ENV = {
    **os.environ,
    "POLARS_MAX_THREADS": "1",
    "_RJEM_MALLOC_CONF": "dirty_decay_ms:0,muzzy_decay_ms:0",
}

READ_AND_MEASURE = """
import re, sys
import polars as pl
from workflow_scripts.calling.scores import read_scores
def peak():  # VmHWM: this process's own peak RSS (ru_maxrss would carry the forking parent's)
    return int(re.search(r"VmHWM:\\s*(\\d+) kB", open("/proc/self/status").read()).group(1)) * 1024
folder, n_chrom = sys.argv[1], int(sys.argv[2])
genes = pl.read_parquet(f"{folder}/genes.parquet")
before = peak()
scores, _ = read_scores(f"{folder}/scores.parquet", genes, {f"c{c}": 10**9 for c in range(n_chrom)})
print(peak() - before, len(scores))
"""


def scores_on_chromosomes(folder, n_chrom: int, per_chrom: int):
    """A scores table of `n_chrom` chromosomes, `per_chrom` positions on each strand of each."""
    folder.mkdir()
    rng = np.random.default_rng(0)
    spans = [(f"g{c}{s}", f"c{c}", 1, per_chrom, s) for c in range(n_chrom) for s in "+-"]
    genes = pl.DataFrame(spans, schema=["gene_id", "chrom", "start", "end", "strand"], orient="row")
    genes.write_parquet(folder / "genes.parquet")
    rows = genes.select("gene_id", "chrom", "strand", position=pl.int_ranges(1, pl.col("end") + 1)).explode(
        "position"
    )
    values = {c: rng.random(rows.height, dtype=np.float32) for c in ("donor", "acceptor")}
    rows.with_columns(**values).write_parquet(folder / "scores.parquet", row_group_size=100_000)
    return folder


def read_peak_bytes(folder, n_chrom: int) -> int:
    """Peak RSS growth of a fresh process while read_scores reads the table."""
    done = subprocess.run(
        [sys.executable, "-c", READ_AND_MEASURE, str(folder), str(n_chrom)],
        capture_output=True,
        text=True,
        check=True,
        env=MEASURED_ENV,
    )
    peak, positions = map(int, done.stdout.split())
    assert positions == 4_800_000
    return peak


def test_reading_scores_peaks_with_the_largest_chromosome_not_the_genome(tmp_path):
    """4.8 M positions on six chromosomes against the same on one: read one chromosome at a
    time, the six peak far lower (measured 275 against 410 MB: 16 bytes per position kept plus
    one chromosome's rows at 32 bytes each; a reader of the whole table peaks the same for both:
    ~960 MB, and 374 against 946 MB when a chromosome's rows were read as one table)."""
    six = read_peak_bytes(scores_on_chromosomes(tmp_path / "six", 6, 400_000), 6)
    one = read_peak_bytes(scores_on_chromosomes(tmp_path / "one", 1, 2_400_000), 1)
    assert six < 0.8 * one, f"six chromosomes {six >> 20} MB, one {one >> 20} MB"  # measured 0.67


CALLS_AND_MEASURE = """
import re, sys
from workflow_scripts.errors import run_cli
from workflow_scripts.rules import make_calls
def peak():
    return int(re.search(r"VmHWM:\\s*(\\d+) kB", open("/proc/self/status").read()).group(1)) * 1024
before = peak()  # the interpreter and its imports, the same for both tables
run_cli(make_calls.main, sys.argv[1:])
print(peak() - before)
"""


def calls_inputs(folder, n_chrom: int, per_chrom: int) -> list[str]:
    """scores_on_chromosomes plus a genome and one donor and acceptor per gene, as make_calls' argv."""
    scores_on_chromosomes(folder, n_chrom, per_chrom)
    rng = np.random.default_rng(1)
    scores = pl.read_parquet(folder / "scores.parquet")  # as a base model scores: low but at a few peaks
    low = {c: rng.random(scores.height, dtype=np.float32) * 0.01 for c in ("donor", "acceptor")}
    low["donor"][rng.integers(0, scores.height, 200)] = 0.9
    scores.with_columns(**low).write_parquet(folder / "scores.parquet", row_group_size=100_000)
    genome = Genome(
        [f"c{c}" for c in range(n_chrom)],
        np.full(n_chrom, per_chrom),
        rng.choice(np.frombuffer(b"ACGT", np.uint8), n_chrom * per_chrom),
    )
    genome.save_cached(folder / "genome")
    genes = pl.read_parquet(folder / "genes.parquet").with_columns(biotype=pl.lit("protein_coding"))
    genes.write_parquet(folder / "genes.parquet")
    sites = genes.select(
        "gene_id",
        pl.col("gene_id").alias("transcript_id"),
        "chrom",
        pl.lit(per_chrom // 3, dtype=pl.Int64).alias("position"),
        "strand",
        pl.lit("donor").alias("splice_type"),
    )
    sites = pl.concat(
        [
            sites,
            sites.with_columns(
                position=pl.lit(per_chrom // 2, dtype=pl.Int64), splice_type=pl.lit("acceptor")
            ),
        ]
    )
    sites.write_parquet(folder / "sites.parquet")
    inputs = {name: folder / f"{name}.parquet" for name in ("scores", "sites", "genes")}
    paths = path_flags(inputs, {"calls": folder / "calls.parquet"})
    return [*paths, "--genome", str(folder / "genome"), "--config", '{"calling": {}}']


def calls_peak_bytes(argv: list[str]) -> int:
    done = subprocess.run(
        [sys.executable, "-c", CALLS_AND_MEASURE, *argv],
        capture_output=True,
        text=True,
        env=MEASURED_ENV,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return int(done.stdout.split()[-1])


def test_make_calls_peaks_with_the_largest_chromosome_not_the_genome(tmp_path):
    """The whole rule (read, call, write) on 4.8 M positions: on six chromosomes it holds one
    chromosome's scores and working arrays at a time, so it peaks far below the same positions on
    one chromosome; the former whole-genome calls peaked alike for both. Peaks are growth over the
    process after its imports (alike for both; with it counted the ratio sat at 0.60-0.61, on the bound)."""
    six = calls_peak_bytes(calls_inputs(tmp_path / "six", 6, 400_000))
    one = calls_peak_bytes(calls_inputs(tmp_path / "one", 1, 2_400_000))
    assert six < 0.7 * one, f"six chromosomes {six >> 20} MB, one {one >> 20} MB"  # 275 vs 515 MB: 0.53
