"""Checks of an annotation or a table of sites against the indexed genome."""

from __future__ import annotations

import numpy as np
import polars as pl

from workflow_scripts.calling.motifs import intron_dinucleotides, is_canonical
from workflow_scripts.data.call_table import chrom_hint
from workflow_scripts.data.genome import Genome
from workflow_scripts.errors import InputError


def check_chromosomes(frame: pl.DataFrame, genome: Genome, path, field: str = "seqid") -> None:
    """Every chromosome of `frame` is in the genome (the same hint as the calls table gets)."""
    missing = [
        name for name in frame["chrom"].unique(maintain_order=True).to_list() if name not in genome.index_of
    ]
    if missing:
        name = missing[0]
        raise InputError(
            path,
            field,
            f"chromosome '{name}' not in genome{chrom_hint(name, genome)} "
            f"({len(missing)} of its chromosomes missing; or restrict with calling.region)",
        )


def chromosome_columns(frame: pl.DataFrame, genome: Genome) -> tuple[np.ndarray, np.ndarray]:
    """Per row: the chromosome's offset in the concatenated sequence and its length."""
    index = np.array([genome.index_of[name] for name in frame["chrom"].to_list()], dtype=np.int64)
    return genome.offsets[index], genome.lengths[index]


def check_inside(frame: pl.DataFrame, genome: Genome, path, start: str, end: str) -> None:
    _, lengths = chromosome_columns(frame, genome)
    beyond = np.flatnonzero(frame[end].to_numpy() > lengths)
    if len(beyond):
        row = frame.row(int(beyond[0]), named=True)
        raise InputError(
            path,
            f"gene '{row.get('gene_id')}'",
            f"ends at {row[end]:,}, past the end of "
            f"chromosome '{row['chrom']}' ({int(lengths[beyond[0]]):,} nt); is this the genome it annotates?",
        )


def site_dinucleotides(sites: pl.DataFrame, genome: Genome) -> np.ndarray:
    offsets, lengths = chromosome_columns(sites, genome)
    return intron_dinucleotides(
        genome.sequence,
        offsets,
        lengths,
        sites["position"].to_numpy(),
        (sites["strand"] == "-").to_numpy(),
        (sites["splice_type"] == "donor").to_numpy(),
    )


def canonical_fractions(sites: pl.DataFrame, genome: Genome) -> dict[str, float]:
    """Fraction of donors with GT and of acceptors with AG (on the site's strand)."""
    pairs = site_dinucleotides(sites, genome)
    fractions = {}
    for splice_type in ("donor", "acceptor"):
        rows = (sites["splice_type"] == splice_type).to_numpy()
        fractions[splice_type] = (
            float(is_canonical(pairs[rows], splice_type).mean()) if rows.any() else float("nan")
        )
    return fractions
