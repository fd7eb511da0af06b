"""Orthologs between two genomes, found from shared exonic k-mers (cross-species transfer, issue 36).

A source gene is an *ortholog* of a target gene when the two share exonic sequence:
calling/paralogs.py's k-mers (the distinct canonical 16-mers of the union of a gene's exons,
read on the forward strand, so copies on either strand match; k-mers over N skipped), and its
share: the shared k-mers over the smaller gene's k-mers. A pair counts when it shares at least
paralogs.MIN_SHARED_KMERS (20) k-mers and at least `min_share` of the smaller gene's
(DEFAULT_MIN_SHARE 0.02). Two unrelated genes share no 16-mer by chance (4^16 ≈ 4.3e9), while a
base substitution every 20 nt still leaves 0.95^16 ≈ 44% of 16-mers whole: sister species'
orthologs share far more than 2%, and the low bar also catches paralogs of the ortholog (gene
family members), which is what a held-out claim must exclude. "Ortholog" here therefore means
"shares exonic sequence"; `share_counts` tells how many target genes pass at other bars.

Every pair is counted at once by joining the two genomes' k-mer tables, so the cost grows with
the k-mers (a few million on a 10 Mb plant region), not with the product of the gene counts.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from workflow_scripts.calling.paralogs import MIN_SHARED_KMERS, exonic_kmers
from workflow_scripts.data.genome import Genome

DEFAULT_MIN_SHARE = 0.02
SHARE_BARS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5)  # share_counts' bars
PAIR_SCHEMA = {"target_gene": pl.String, "source_gene": pl.String, "shared": pl.Int64, "share": pl.Float64}


def kmer_rows(kmers: dict[str, np.ndarray]) -> pl.DataFrame:
    """One row per (gene index, k-mer), and each gene's k-mer count, genes in `kmers`' order."""
    sizes = np.array([len(values) for values in kmers.values()], dtype=np.int64)
    genes = np.repeat(np.arange(len(kmers), dtype=np.int64), sizes)
    values = np.concatenate(list(kmers.values())) if kmers else np.empty(0, np.int64)
    return pl.DataFrame({"gene": genes, "kmer": values.astype(np.int64)})


def shared_kmer_pairs(target: dict[str, np.ndarray], source: dict[str, np.ndarray]) -> pl.DataFrame:
    """Every (target gene, source gene) pair sharing at least MIN_SHARED_KMERS k-mers: target_gene,
    source_gene, shared (k-mers in both), share (shared over the smaller gene's k-mers)."""
    if not target or not source:
        return pl.DataFrame(schema=PAIR_SCHEMA)
    target_names, source_names = list(target), list(source)
    target_sizes = np.array([len(v) for v in target.values()], dtype=np.int64)
    source_sizes = np.array([len(v) for v in source.values()], dtype=np.int64)
    pairs = (
        kmer_rows(target)
        .join(kmer_rows(source), on="kmer", suffix="_source")
        .group_by("gene", "gene_source")
        .agg(pl.len().cast(pl.Int64).alias("shared"))
        .filter(pl.col("shared") >= MIN_SHARED_KMERS)
    )
    smaller = np.minimum(
        target_sizes[pairs["gene"].to_numpy()], source_sizes[pairs["gene_source"].to_numpy()]
    )
    return pl.DataFrame(
        {
            "target_gene": np.array(target_names, dtype=object)[pairs["gene"].to_numpy()].tolist(),
            "source_gene": np.array(source_names, dtype=object)[pairs["gene_source"].to_numpy()].tolist(),
            "shared": pairs["shared"].to_numpy(),
            "share": pairs["shared"].to_numpy() / smaller,
        },
        schema=PAIR_SCHEMA,
    ).sort("target_gene", "share", "source_gene", descending=[False, True, False])


def exonic_kmer_pairs(
    target_exons: pl.DataFrame, target_genome: Genome, source_exons: pl.DataFrame, source_genome: Genome
) -> pl.DataFrame:
    """shared_kmer_pairs of two genomes' genes (exons: gene_id, chrom, start, end; 1-based)."""
    return shared_kmer_pairs(
        exonic_kmers(target_exons, target_genome), exonic_kmers(source_exons, source_genome)
    )


def orthologs(pairs: pl.DataFrame, min_share: float = DEFAULT_MIN_SHARE) -> pl.DataFrame:
    """The pairs at or above `min_share`: each target gene's orthologs among the source genes."""
    return pairs.filter(pl.col("share") >= min_share)


def share_counts(pairs: pl.DataFrame, bars: tuple[float, ...] = SHARE_BARS) -> dict[float, int]:
    """How many target genes have an ortholog at each share bar."""
    best = pairs.group_by("target_gene").agg(pl.col("share").max())["share"].to_numpy()
    return {bar: int((best >= bar).sum()) for bar in bars}
