"""Calls tables in tests: the made-up scores tables calls are made from, and the extract entry
point's command line that reads a calls table."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl

from tests.workflow_helpers import ROOT, subprocess_env


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
    return ["--genome", str(genome), "--calls", str(calls), "--out", str(out), "--config", config]


def run_extract_program(genome: Path, calls: Path, out: Path, config: str) -> subprocess.CompletedProcess:
    """The extract entry point run as a program, as a rule's shell runs it (text output captured)."""
    command = [
        sys.executable,
        "-m",
        "workflow_scripts.rules.extract",
        *extract_args(genome, calls, out, config),
    ]
    return subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=subprocess_env())
