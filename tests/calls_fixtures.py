"""Calls tables in tests: the made-up scores tables calls are made from, the extract entry
point's command line that reads a calls table, and the working folders that make calls from the
A. thaliana slice in tests/data (a user's scores table, or a tiny random-weight base model)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl

from tests.spliceai_fixtures import write_spliceai_h5
from tests.workflow_helpers import ROOT, subprocess_env, write_config
from workflow_scripts.calling.annotation import build_site_tables
from workflow_scripts.calling.gff import read_annotation
from workflow_scripts.command_line import path_flags

DATA = Path(__file__).parent / "data"
FASTA, GTF = "athaliana_chr1_1-14000.fa", "athaliana_chr1_1-14000.gtf.gz"
CALLS = "results/calls/calls.parquet"
SHARD = "results/base_model/shards/{}-of-{}.parquet"


def background_scores(genes: pl.DataFrame, rng: np.random.Generator, power: float) -> pl.DataFrame:
    """A row per position of every gene (gene_id, chrom, strand, position, donor, acceptor), the
    scores drawn as uniform ** power: the higher the power, the fewer positions stand out."""
    parts = []
    for gene in genes.iter_rows(named=True):
        positions = np.arange(gene["start"], gene["end"] + 1)
        parts.append(
            pl.DataFrame(
                {
                    "gene_id": gene["gene_id"],
                    "chrom": gene["chrom"],
                    "strand": gene["strand"],
                    "position": positions,
                    "donor": rng.random(len(positions)) ** power,
                    "acceptor": rng.random(len(positions)) ** power,
                }
            )
        )
    return pl.concat(parts)


def plant_site_scores(scores: pl.DataFrame, sites: pl.DataFrame) -> pl.DataFrame:
    """The scores with each site's own column (donor or acceptor, by its splice_type) set to the
    site's `planted` value at its position; positions that are no site keep theirs."""
    for splice_type in ("donor", "acceptor"):
        typed = sites.filter(pl.col("splice_type") == splice_type).select(
            "chrom", "strand", "position", "planted"
        )
        scores = (
            scores.join(typed, on=["chrom", "strand", "position"], how="left")
            .with_columns(pl.coalesce("planted", splice_type).alias(splice_type))
            .drop("planted")
        )
    return scores


def extract_args(genome: Path, calls: Path, out: Path, config: str) -> list[str]:
    """The arguments of `python -m workflow_scripts.rules.extract`."""
    return ["--genome", str(genome), *path_flags({"calls": calls}, {"windows": out}), "--config", config]


def run_extract_program(genome: Path, calls: Path, out: Path, config: str) -> subprocess.CompletedProcess:
    """The extract entry point run as a program, as a rule's shell runs it (text output captured)."""
    command = [
        sys.executable,
        "-m",
        "workflow_scripts.rules.extract",
        *extract_args(genome, calls, out, config),
    ]
    return subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=subprocess_env())


def slice_scores(path: Path) -> None:
    """A user's scores table for the slice's protein-coding genes: high at most annotated sites."""
    tables = build_site_tables(read_annotation(DATA / GTF), ["protein_coding"])
    rng = np.random.default_rng(0)
    scores = background_scores(tables.genes, rng, power=20)
    sites = tables.sites.with_columns(pl.Series("planted", rng.choice([0.97, 0.2], tables.sites.height)))
    plant_site_scores(scores, sites).write_csv(path, separator="\t")


def scores_workdir(directory: Path, **calling) -> Path:
    for name in (FASTA, GTF):
        shutil.copy(DATA / name, directory / name)
    slice_scores(directory / "scores.tsv")
    values = {"start": "scores", "annotation": GTF, "scores": "scores.tsv", **calling}
    return write_config(directory, "calling.yaml", {"genome": FASTA, "calling": values})


def annotation_workdir(directory: Path, shards: int) -> Path:
    """The slice's genome and annotation, two tiny models, calling.start annotation with `shards`.
    batch_size 1: every chunk is its own forward pass, so sharding cannot move a float's rounding."""
    directory.mkdir(parents=True, exist_ok=True)
    for name in (FASTA, GTF):
        shutil.copy(DATA / name, directory / name)
    (directory / "models").mkdir()
    for seed in (1, 2):
        write_spliceai_h5(directory / "models" / f"model{seed}.h5", seed=seed)
    base_model = {
        "weights": "models",
        "shards": shards,
        "batch_size": 1,
        "chunk_length": 500,
        "device": "cpu",
    }
    calling = {"start": "annotation", "annotation": GTF, "base_model": base_model}
    return write_config(directory, "calling.yaml", {"genome": FASTA, "calling": calling})
