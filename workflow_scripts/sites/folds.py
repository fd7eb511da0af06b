"""Out-of-fold units: gene clusters (calling/paralogs.py: neighbouring paralogs and overlapping
genes) cut into `sites.folds` folds, so near-copies of a test gene are never in its training folds.
A candidate outside every annotated gene on its strand (a whole-region scan: calling.regions with
start annotation) has its genomic block of sites/whole_region.BLOCK_NT as its unit instead.

The clusters are shuffled with `sites.seed` and cut into k parts of about equal share of rows
(candidates and sites), as data/splits.py cuts genes into folds; every gene is tested once.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from workflow_scripts.calling.contract import GENE_CLUSTER
from workflow_scripts.data.splits import gene_folds, shuffled_genes
from workflow_scripts.errors import InputError
from workflow_scripts.sites.candidates import Candidates
from workflow_scripts.sites.whole_region import NO_GENE, block_label, with_locations


def with_clusters(frame: pl.DataFrame, clusters: pl.DataFrame) -> pl.DataFrame:
    """gene_cluster of each row's gene; a gene the clusters table lacks is a cluster of its own;
    a candidate outside every gene on its strand, its genomic block (sites/whole_region.py)."""
    joined = frame.join(
        clusters.select("gene_id", GENE_CLUSTER), on="gene_id", how="left", maintain_order="left"
    )
    cluster = pl.coalesce(GENE_CLUSTER, "gene_id")
    if {"chrom", "position"} <= set(frame.columns):
        cluster = pl.when(pl.col("gene_id") == NO_GENE).then(block_label()).otherwise(cluster)
    return joined.with_columns(cluster.alias(GENE_CLUSTER))


def cluster_folds(units: pl.Series, k: int, seed: int) -> pl.DataFrame:
    """gene_cluster -> fold (1..k), clusters weighted by their rows in `units`."""
    clusters, rows = shuffled_genes(units.alias(GENE_CLUSTER), seed)
    if len(clusters) < k:
        raise InputError(
            "config",
            "sites.folds",
            f"{k} folds need at least {k} gene clusters; the scored genes form {len(clusters)}",
        )
    folds = gene_folds(rows, k) + 1
    return pl.DataFrame({GENE_CLUSTER: clusters, "fold": folds.astype(np.int64)})


def assign_folds(
    found: Candidates, clusters: pl.DataFrame, k: int, seed: int, genes: pl.DataFrame | None = None
) -> Candidates:
    """The candidates and sites with gene_cluster and fold; with `genes`, each candidate's
    location (gene, antisense, intergenic: sites/whole_region.py)."""
    table, sites = with_clusters(found.table, clusters), with_clusters(found.sites, clusters)
    if genes is not None:
        table = with_locations(table, genes)
    folds = cluster_folds(pl.concat([table[GENE_CLUSTER], sites[GENE_CLUSTER]]), k, seed)

    def fold_of(frame: pl.DataFrame) -> pl.DataFrame:
        return frame.join(folds, on=GENE_CLUSTER, how="left", maintain_order="left")

    return Candidates(fold_of(table), found.features, fold_of(sites), found.members)
