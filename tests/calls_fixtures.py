"""Scores tables made up for calling tests: a background score at every gene position."""

from __future__ import annotations

import numpy as np
import polars as pl


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
