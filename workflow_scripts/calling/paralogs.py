"""Clusters of neighbouring genes with near-identical exons (tandem paralogs), kept in one split.

Tandem duplicates sit next to each other and share most of their exonic sequence, so a split
by gene alone can train on one copy and test on the other: the test then measures memory, not
generalisation. annotate_sites links two genes when they lie within `calling.paralogs.neighbours`
genes of each other on one chromosome and at least `calling.paralogs.min_shared` of the smaller
gene's exonic k-mers (KMER nt, either strand) occur in the other; linked genes form one cluster
(transitively), named after its first gene_id in string order. Data splits then keep each cluster
in one split (data/splits.py). `neighbours: 0` leaves every gene its own cluster.

Exonic sequence is the union of a gene's selected exons, read on the forward strand; k-mers are
canonical (the smaller of a k-mer and its reverse complement), so copies on opposite strands
match too. k-mers over N are skipped; a pair must share at least MIN_SHARED_KMERS k-mers.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from workflow_scripts.config.types import ParalogsSection
from workflow_scripts.data.genome import Genome

KMER = 16  # 4^16 k-mers: two unrelated 2 kb exon sets share none by chance
MIN_SHARED_KMERS = 20
BASE_CODE = np.full(256, 4, dtype=np.int64)
BASE_CODE[np.frombuffer(b"ACGT", np.uint8)] = np.arange(4)


def canonical_kmers(sequence: np.ndarray, k: int = KMER) -> np.ndarray:
    """The distinct canonical k-mers (as integers) of an uppercase ASCII uint8 sequence."""
    codes = BASE_CODE[sequence]
    if len(codes) < k:
        return np.empty(0, dtype=np.int64)
    count = len(codes) - k + 1
    forward = np.zeros(count, dtype=np.int64)
    reverse = np.zeros(count, dtype=np.int64)
    for j in range(k):
        base = codes[j : j + count]
        forward = forward * 4 + np.minimum(base, 3)
        reverse += (3 - np.minimum(base, 3)) << (2 * j)
    invalid = np.concatenate([[0], np.cumsum(codes == 4)])
    clean = invalid[k:] == invalid[:count]
    return np.unique(np.minimum(forward, reverse)[clean])


def merged_intervals(starts: np.ndarray, ends: np.ndarray) -> list[tuple[int, int]]:
    """1-based inclusive intervals merged where they overlap or touch."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(zip(starts.tolist(), ends.tolist())):
        if merged and start <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def exonic_kmers(exons: pl.DataFrame, genome: Genome) -> dict[str, np.ndarray]:
    """gene_id -> its exons' canonical k-mers (exons: gene_id, chrom, start, end)."""
    exons = exons.sort("gene_id", "start")
    gene_ids = exons["gene_id"].to_numpy()
    offsets = exons["chrom"].replace_strict(dict(zip(genome.names, genome.offsets.tolist()))).to_numpy()
    starts = exons["start"].to_numpy() + offsets
    ends = exons["end"].to_numpy() + offsets
    firsts = np.flatnonzero(np.r_[True, gene_ids[1:] != gene_ids[:-1]])
    kmers = {}
    for first, last in zip(firsts, np.r_[firsts[1:], len(gene_ids)]):
        pieces = [
            genome.sequence[start - 1 : end]
            for start, end in merged_intervals(starts[first:last], ends[first:last])
        ]
        kmers[str(gene_ids[first])] = canonical_kmers(np.concatenate(pieces))
    return kmers


def shared_share(first: np.ndarray, second: np.ndarray) -> float:
    """The share of the smaller set found in the other (0 below MIN_SHARED_KMERS shared)."""
    shared = len(np.intersect1d(first, second, assume_unique=True))
    if shared < MIN_SHARED_KMERS:
        return 0.0
    return shared / min(len(first), len(second))


def neighbour_links(genes: pl.DataFrame, kmers: dict, neighbours: int, min_shared: float) -> list:
    """(i, j, share) for genes i < j at most `neighbours` apart on one chromosome (genes sorted)."""
    links = []
    ids, chroms = genes["gene_id"].to_list(), genes["chrom"].to_list()
    for i, gene_id in enumerate(ids):
        for j in range(i + 1, min(i + 1 + neighbours, len(ids))):
            if chroms[j] != chroms[i]:
                break
            share = shared_share(kmers[gene_id], kmers[ids[j]])
            if share >= min_shared:
                links.append((i, j, share))
    return links


def cluster_roots(count: int, links: list) -> np.ndarray:
    """Union-find over `count` genes: each gene's root index."""
    parent = np.arange(count)

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, j, _ in links:
        parent[root(j)] = root(i)
    return np.array([root(i) for i in range(count)])


def gene_clusters(exons: pl.DataFrame, genes: pl.DataFrame, genome: Genome, settings: ParalogsSection):
    """(gene_id, gene_cluster) for every gene, and a summary of the clusters (module docstring)."""
    genes = genes.sort("chrom", "start", "gene_id")
    neighbours, min_shared = settings.neighbours, settings.min_shared
    links = []
    if neighbours > 0:
        links = neighbour_links(genes, exonic_kmers(exons, genome), neighbours, min_shared)
    roots = cluster_roots(genes.height, links)
    clusters = (
        genes.select("gene_id")
        .with_columns(pl.Series("root", roots))
        .with_columns(pl.col("gene_id").min().over("root").alias("gene_cluster"))
        .drop("root")
    )
    sizes = clusters.group_by("gene_cluster").len()["len"]
    summary = {
        "paralog_links": len(links),
        "paralog_clusters": int((sizes > 1).sum()),
        "genes_in_paralog_clusters": int(sizes.filter(sizes > 1).sum()),
        "largest_paralog_cluster": int(sizes.to_numpy().max(initial=0)),
    }
    return clusters, summary
