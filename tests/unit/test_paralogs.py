"""Tandem paralogs and overlapping genes form one gene cluster, which splits keep together."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from tests.unit.test_annotation import FASTA, GTF, run_annotate
from tests.unit.test_calls import Toy, one_line_error, write_cli_inputs
from workflow_scripts.calling.paralogs import canonical_kmers, gene_clusters
from workflow_scripts.command_line import path_flags
from workflow_scripts.config.types import ParalogsSection, complete_typed_section
from workflow_scripts.data.genome import COMPLEMENT, Genome
from workflow_scripts.data.splits import assign_splits
from workflow_scripts.errors import run_cli
from workflow_scripts.rules import cluster_genes
from workflow_scripts.rules import make_calls as make_calls_rule

BASES = np.frombuffer(b"ACGT", dtype=np.uint8)
ON = ParalogsSection(neighbours=10, min_shared=0.1)


def random_bases(rng, length: int) -> np.ndarray:
    return rng.choice(BASES, length)


def reverse_complement(bases: np.ndarray) -> np.ndarray:
    return COMPLEMENT[bases[::-1]]


def test_canonical_kmers_read_both_strands_alike_and_skip_n():
    bases = random_bases(np.random.default_rng(0), 300)
    assert np.array_equal(canonical_kmers(bases), canonical_kmers(reverse_complement(bases)))
    assert len(canonical_kmers(bases)) == 300 - 16 + 1
    with_n = bases.copy()
    with_n[150] = ord("N")
    assert len(canonical_kmers(with_n)) == 300 - 16 + 1 - 16


class PlantedGenome:
    """Genes g1..g6 of two 400-nt exons: g2 copies g1's exons (with 2% substitutions), g4 is g3's
    exons reverse-complemented on the other strand, g6 copies g5 but lies beyond the neighbours
    compared; everything else is random."""

    def __init__(self, rng):
        sequence = random_bases(rng, 40_000)
        starts = {"g1": 1_001, "g2": 4_001, "g3": 7_001, "g4": 10_001, "g5": 13_001, "g6": 33_001}
        exon_offsets = ((0, 400), (1_000, 1_400))
        for copy, source in (("g2", "g1"), ("g6", "g5")):
            for begin, end in exon_offsets:
                piece = sequence[starts[source] - 1 + begin : starts[source] - 1 + end].copy()
                mutated = rng.random(len(piece)) < 0.02
                piece[mutated] = random_bases(rng, int(mutated.sum()))
                sequence[starts[copy] - 1 + begin : starts[copy] - 1 + end] = piece
        gene_span = sequence[starts["g3"] - 1 : starts["g3"] - 1 + 1_400]
        sequence[starts["g4"] - 1 : starts["g4"] - 1 + 1_400] = reverse_complement(gene_span)
        self.genome = Genome(["c1"], np.array([len(sequence)]), sequence)
        rows = []
        for gene_id, start in starts.items():
            for begin, end in exon_offsets:
                rows.append((gene_id, "c1", start + begin, start + end - 1, "-" if gene_id == "g4" else "+"))
        self.exons = pl.DataFrame(rows, schema=["gene_id", "chrom", "start", "end", "strand"], orient="row")
        self.genes = self.exons.group_by("gene_id", "chrom", "strand").agg(
            pl.col("start").min(), pl.col("end").max()
        )
        fillers = [(f"f{i}", "c1", 16_001 + 1_000 * i, 16_500 + 1_000 * i, "+") for i in range(12)]
        self.filler_genes = pl.DataFrame(
            fillers, schema=["gene_id", "chrom", "start", "end", "strand"], orient="row"
        )


def clusters_of(planted: PlantedGenome, settings: ParalogsSection) -> dict[str, str]:
    genes = pl.concat(
        [planted.genes.select("gene_id", "chrom", "start", "end", "strand"), planted.filler_genes]
    )
    exons = pl.concat([planted.exons, planted.filler_genes])
    clusters, summary = gene_clusters(exons, genes, planted.genome, settings)
    assert clusters.height == genes.height
    return dict(clusters.iter_rows()), summary


def test_copies_within_the_neighbours_share_a_cluster():
    clusters, summary = clusters_of(PlantedGenome(np.random.default_rng(1)), ON)
    assert clusters["g2"] == clusters["g1"] == "g1"
    assert clusters["g4"] == clusters["g3"] == "g3"
    assert clusters["g6"] == "g6" and clusters["g5"] == "g5", "g6 lies 13 genes after g5"
    assert all(clusters[f"f{i}"] == f"f{i}" for i in range(12))
    assert summary["paralog_clusters"] == 2 and summary["genes_in_paralog_clusters"] == 4


def test_more_neighbours_reach_the_far_copy_and_none_turns_clustering_off():
    planted = PlantedGenome(np.random.default_rng(1))
    assert clusters_of(planted, replace(ON, neighbours=20))[0]["g6"] == "g5"
    clusters, summary = clusters_of(planted, replace(ON, neighbours=0))
    assert all(gene == cluster for gene, cluster in clusters.items())
    assert summary["paralog_links"] == 0


def windows_of_clusters(clusters: dict[str, str], rows_per_gene: int = 5) -> pl.DataFrame:
    genes = [gene for gene in clusters for _ in range(rows_per_gene)]
    return pl.DataFrame({"gene_id": genes, "gene_cluster": [clusters[g] for g in genes]})


@pytest.mark.parametrize("fold", [None, 1, 2, 3])
def test_splits_keep_each_cluster_in_one_split(fold):
    clusters = {f"g{i}": f"g{i - i % 4}" for i in range(60)}  # 15 clusters of 4 genes
    frame = windows_of_clusters(clusters)
    split = {"folds": 3} if fold else {}
    for seed in range(5):
        splits = frame.with_columns(
            assign_splits(frame, complete_typed_section("split", {**split, "seed": seed}), fold, "windows")
        )
        per_cluster = splits.group_by("gene_cluster").agg(pl.col("split").n_unique())
        assert (per_cluster["split"] == 1).all()
        assert splits["split"].n_unique() == 3
    by_gene = frame.drop("gene_cluster")
    by_gene = by_gene.with_columns(
        assign_splits(by_gene, complete_typed_section("split", {**split, "seed": 0}), fold, "windows"),
        frame["gene_cluster"],
    )
    assert (by_gene.group_by("gene_cluster").agg(pl.col("split").n_unique())["split"] > 1).any()


def annotate_and_cluster(tmp_path: Path, annotation: Path, genome: Path, calling: dict) -> pl.DataFrame:
    """annotate_sites then cluster_genes, as the workflow runs them: the genes with their cluster."""
    _, genes, _ = run_annotate(tmp_path, annotation, genome, calling)
    out = tmp_path / "out"
    inputs = {"exons": out / "exons.parquet", "genes": out / "genes.parquet"}
    argv = [*path_flags(inputs, {"gene_clusters": out / "clusters.parquet"}), "--genome", str(genome)]
    run_cli(cluster_genes.main, [*argv, "--config", json.dumps({"calling": calling})])
    return genes.join(pl.read_parquet(out / "clusters.parquet"), on="gene_id", how="left")


def test_every_gene_gets_a_cluster_and_unrelated_genes_their_own(tmp_path, capsys):
    """The 14 kb snippet has no paralogs: each gene is its own cluster, and the log says so."""
    genes = annotate_and_cluster(tmp_path, GTF, FASTA, {"biotypes": "all"})
    assert genes.height == 4 and (genes["gene_cluster"] == genes["gene_id"]).all()
    assert "0 of 4 genes in 0 clusters" in capsys.readouterr().err


def test_calls_carry_the_gene_cluster_when_the_genes_name_one(tmp_path):
    toy = Toy(np.random.default_rng(3))
    toy.genes = toy.genes.with_columns(
        pl.when(pl.col("gene_id") == "gB")
        .then(pl.lit("gA"))
        .otherwise(pl.col("gene_id"))
        .alias("gene_cluster")
    )
    calls, _ = toy.call(tmp_path)
    expected = calls["gene_id"].replace({"gB": "gA"})
    assert calls["gene_cluster"].to_list() == expected.to_list()
    toy.genes = toy.genes.drop("gene_cluster")
    assert "gene_cluster" not in toy.call(tmp_path)[0].columns


def test_make_calls_refuses_a_gene_without_a_cluster_in_one_line(tmp_path, capsys):
    toy = Toy(np.random.default_rng(4))
    argv = write_cli_inputs(tmp_path, toy, toy.scores) + ["--config", "{}"]
    clusters = tmp_path / "clusters.parquet"
    toy.genes.select("gene_id", pl.col("gene_id").alias("gene_cluster")).write_parquet(clusters)
    run_cli(make_calls_rule.main, [*argv, "--gene-clusters", str(clusters)])
    calls = pl.read_parquet(tmp_path / "calls.parquet")
    assert (calls["gene_cluster"] == calls["gene_id"]).all()
    capsys.readouterr()
    toy.genes.filter(pl.col("gene_id") != "gC").select(
        "gene_id", pl.col("gene_id").alias("gene_cluster")
    ).write_parquet(clusters)
    line = one_line_error(capsys, [*argv, "--gene-clusters", str(clusters)])
    assert "clusters.parquet" in line and "gene_cluster" in line and "'gC'" in line
