"""The base model's training blocks (workflow_scripts/base_training/): real flanking DNA, N only past
a chromosome end, reverse complement and labels on the - strand, overlapping genes merged, every
transcript's sites labelled, splits that never cut a gene cluster. The rule in Snakemake:
tests/workflow/test_base_data_workflow.py."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import polars as pl
import pytest

from workflow_scripts.base_training import splits
from workflow_scripts.base_training.arrays import encode, reverse_complement
from workflow_scripts.base_training.blocks import core_cuts, merged_spans
from workflow_scripts.base_training.dataset import (
    Settings,
    canonical_sites,
    open_base_data,
    plan_blocks,
    write_arrays,
    write_blocks,
)
from workflow_scripts.calling.annotation import build_site_tables
from workflow_scripts.calling.gff import read_annotation
from workflow_scripts.data.genome import Genome
from workflow_scripts.errors import InputError
from workflow_scripts.progress import Console

HALF = 50


def settings(**changes) -> Settings:
    values = {
        "context": 2 * HALF,
        "max_core": 1000,
        "merge_gap": 0,
        "split": "clusters",
        "fractions": {"train": 0.8, "validation": 0.1, "test": 0.1},
        "test_chromosomes": [],
        "validation_chromosomes": [],
        "seed": 1,
        "canonical_only": False,
    }
    return Settings(**(values | changes))


def random_genome(lengths: dict[str, int], seed: int = 0) -> Genome:
    rng = np.random.default_rng(seed)
    parts = [np.frombuffer(b"ACGT", np.uint8)[rng.integers(0, 4, n)] for n in lengths.values()]
    return Genome(list(lengths), np.array(list(lengths.values())), np.concatenate(parts))


def genes_frame(rows: list[tuple]) -> pl.DataFrame:
    """(gene_id, chrom, start, end, strand), 1-based inclusive as genes.parquet."""
    frame = pl.DataFrame(rows, schema=["gene_id", "chrom", "start", "end", "strand"], orient="row")
    return frame.with_columns(
        pl.col("start", "end").cast(pl.Int64), pl.lit("protein_coding").alias("biotype")
    )


def own_clusters(genes: pl.DataFrame) -> pl.DataFrame:
    return genes.select("gene_id", pl.col("gene_id").alias("gene_cluster"))


def build(tmp_path: Path, genome, genes, sites, clusters=None, **changes):
    tmp_path.mkdir(parents=True, exist_ok=True)
    chosen = settings(**changes)
    blocks = plan_blocks(genes, own_clusters(genes) if clusters is None else clusters, genome, chosen)
    paths = SimpleNamespace(out_sequence=tmp_path / "sequence.npy", out_labels=tmp_path / "labels.npy")
    counts = write_arrays(blocks, sites, genome, chosen, paths, Console(None))
    write_blocks(blocks, tmp_path / "blocks.parquet")
    return open_base_data(tmp_path / "blocks.parquet", paths.out_sequence, paths.out_labels), counts


def no_sites() -> pl.DataFrame:
    return pl.DataFrame(
        schema={
            "gene_id": pl.String,
            "chrom": pl.String,
            "position": pl.Int64,
            "strand": pl.String,
            "splice_type": pl.String,
        }
    )


def forward(genome: Genome, chrom: str, start: int, end: int) -> np.ndarray:
    offset = genome.offsets[genome.index_of[chrom]]
    return encode(np.asarray(genome.sequence[offset + start : offset + end]))


def test_flanks_are_the_genomes_dna_and_n_only_past_the_chromosome_end(tmp_path):
    genome = random_genome({"c1": 3000, "c2": 500})
    genes = genes_frame(
        [("g1", "c1", 1001, 1400, "+"), ("g2", "c1", 21, 300, "+"), ("g3", "c2", 451, 490, "+")]
    )
    data, counts = build(
        tmp_path, genome, genes, no_sites(), fractions={"train": 1.0, "validation": 0.0, "test": 0.0}
    )
    by_gene = {row["genes"][0]: row for row in data.blocks.iter_rows(named=True)}
    seq, labels = data.block(by_gene["g1"]["block"])
    assert (seq == forward(genome, "c1", 1000 - HALF, 1400 + HALF)).all()
    assert (labels[:HALF] == -1).all() and (labels[-HALF:] == -1).all() and (labels[HALF:-HALF] == 0).all()
    seq, _ = data.block(by_gene["g2"]["block"])  # 20 nt before the chromosome's start: 30 N
    assert (seq[:30] == 4).all() and (seq[30:] == forward(genome, "c1", 0, 300 + HALF)).all()
    seq, _ = data.block(by_gene["g3"]["block"])  # 10 nt after the gene, then the end of c2
    assert (seq[-40:] == 4).all() and (seq[:-40] == forward(genome, "c2", 450 - HALF, 500)).all()
    assert counts["padding_nt"] == 30 + 40 and counts["masked_nt"] == 0


def planted_genome() -> tuple[Genome, pl.DataFrame, pl.DataFrame]:
    """One chromosome: a + gene with GT after its donor (1-based 200) and AG before its acceptor
    (301), and a - gene whose donor (1-based 801) has AC before it and acceptor (700) CT after it."""
    genome = random_genome({"c1": 2000})
    bases = genome.sequence.copy()
    for position, pair in ((201, b"GT"), (299, b"AG"), (799, b"AC"), (701, b"CT")):
        bases[position - 1 : position + 1] = np.frombuffer(pair, np.uint8)
    genome = Genome(["c1"], np.array([2000]), bases)
    genes = genes_frame([("plus", "c1", 101, 400, "+"), ("minus", "c1", 601, 900, "-")])
    sites = pl.DataFrame(
        {
            "gene_id": ["plus", "plus", "minus", "minus"],
            "chrom": ["c1"] * 4,
            "position": [200, 301, 801, 700],
            "strand": ["+", "+", "-", "-"],
            "splice_type": ["donor", "acceptor", "donor", "acceptor"],
        }
    )
    return genome, genes, sites


def test_minus_strand_blocks_are_reverse_complemented_with_their_labels(tmp_path):
    genome, genes, sites = planted_genome()
    data, counts = build(
        tmp_path, genome, genes, sites, fractions={"train": 1.0, "validation": 0.0, "test": 0.0}
    )
    assert counts["sites_placed"] == 4
    for row in data.blocks.iter_rows(named=True):
        seq, labels = data.block(row["block"])
        expected = forward(genome, "c1", row["core_start"] - HALF, row["core_end"] + HALF)
        if row["strand"] == "-":
            expected = reverse_complement(expected)
        assert (seq == expected).all()
        donor, acceptor = int(np.flatnonzero(labels == 2)[0]), int(np.flatnonzero(labels == 1)[0])
        text = b"ACGTN"
        # read in the block's direction, as the transcript: GT after the donor, AG before the acceptor
        assert bytes(text[c] for c in seq[donor + 1 : donor + 3]) == b"GT", row["strand"]
        assert bytes(text[c] for c in seq[acceptor - 2 : acceptor]) == b"AG", row["strand"]
        assert donor < acceptor  # the transcript runs left to right in both directions


def test_overlapping_genes_of_one_strand_share_a_block_and_long_spans_are_cut(tmp_path):
    genes = genes_frame(
        [
            ("a", "c1", 101, 500, "+"),
            ("b", "c1", 401, 900, "+"),  # overlaps a
            ("c", "c1", 951, 1000, "+"),  # 50 nt after b: merged only with merge_gap >= 50
            ("d", "c1", 450, 600, "-"),  # other strand: its own block
        ]
    )
    spans = merged_spans(genes, merge_gap=0)
    assert sorted(map(tuple, spans["genes"].to_list())) == [("a", "b"), ("c",), ("d",)]
    spans = merged_spans(genes, merge_gap=50)
    assert ("a", "b", "c") in set(map(tuple, spans["genes"].to_list()))
    assert core_cuts(0, 2500, 1000) == [(0, 833), (833, 1667), (1667, 2500)]
    genome = random_genome({"c1": 3000})
    data, _ = build(
        tmp_path,
        genome,
        genes,
        no_sites(),
        max_core=400,
        merge_gap=50,
        fractions={"train": 1.0, "validation": 0.0, "test": 0.0},
    )
    plus = data.blocks.filter(pl.col("strand") == "+").sort("core_start")
    assert plus["core_start"][0] == 100 and plus["core_end"][-1] == 1000
    assert (plus["core_start"][1:].to_numpy() == plus["core_end"][:-1].to_numpy()).all()
    assert (plus["core_end"] - plus["core_start"]).max() <= 400
    assert [g.to_list() for g in plus["genes"]] == [["a"], ["a", "b"], ["b", "c"]]  # 300-nt pieces


GTF_TWO_TRANSCRIPTS = """\
c1\tt\tgene\t101\t600\t.\t+\t.\tgene_id "g"; gene_biotype "protein_coding";
c1\tt\texon\t101\t200\t.\t+\t.\tgene_id "g"; transcript_id "t1";
c1\tt\texon\t301\t600\t.\t+\t.\tgene_id "g"; transcript_id "t1";
c1\tt\texon\t101\t250\t.\t+\t.\tgene_id "g"; transcript_id "t2";
c1\tt\texon\t401\t600\t.\t+\t.\tgene_id "g"; transcript_id "t2";
"""


def test_every_transcripts_sites_are_labelled(tmp_path):
    path = tmp_path / "two.gtf"
    path.write_text(GTF_TWO_TRANSCRIPTS)
    tables = build_site_tables(read_annotation(path), "all", "all")
    genome = random_genome({"c1": 1000})
    data, counts = build(
        tmp_path, genome, tables.genes, tables.sites, fractions={"train": 1.0, "validation": 0.0, "test": 0.0}
    )
    _, labels = data.block(0)
    core = labels[HALF:-HALF]
    assert sorted((np.flatnonzero(core == 2) + 101).tolist()) == [200, 250]  # both transcripts' donors
    assert sorted((np.flatnonzero(core == 1) + 101).tolist()) == [301, 401]
    assert counts["sites_placed"] == 4


def test_canonical_only_keeps_the_sites_with_canonical_intron_ends():
    genome, _, sites = planted_genome()
    assert canonical_sites(sites, genome).height == 4
    bases = genome.sequence.copy()
    bases[200:202] = np.frombuffer(b"CC", np.uint8)  # the + donor's GT -> CC
    kept = canonical_sites(sites, Genome(["c1"], np.array([2000]), bases))
    assert kept.height == 3 and 200 not in kept["position"].to_list()


def many_genes(n: int = 60) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Genes on both strands of two chromosomes; clusters of three neighbours, on either strand."""
    rows = [
        (f"g{i:02d}", f"c{1 + i % 2}", 200 + 400 * (i // 2), 450 + 400 * (i // 2), "+-"[i % 3 == 0])
        for i in range(n)
    ]
    genes = genes_frame(rows)
    clusters = genes.select("gene_id", pl.format("k{}", pl.int_range(pl.len()) // 3).alias("gene_cluster"))
    return genes, clusters


def test_the_split_never_cuts_a_gene_cluster_and_test_cores_are_masked_elsewhere(tmp_path):
    genes, clusters = many_genes()
    genome = random_genome({"c1": 14000, "c2": 14000})
    half = 200  # flanks reach the neighbouring genes (150 nt away)
    data, counts = build(
        tmp_path,
        genome,
        genes,
        no_sites(),
        clusters=clusters,
        context=2 * half,
        fractions={"train": 0.6, "validation": 0.2, "test": 0.2},
    )
    split_of_gene = data.blocks.explode("genes").join(clusters, left_on="genes", right_on="gene_id")
    per_cluster = split_of_gene.group_by("gene_cluster").agg(pl.col("split").n_unique())
    assert (per_cluster["split"] == 1).all()
    assert set(data.blocks["split"]) == {"train", "validation", "test"}
    test = data.blocks.filter(pl.col("split") == "test")
    assert counts["masked_nt"] > 0
    checked = 0
    for row in data.blocks.filter(pl.col("split") != "test").iter_rows(named=True):
        seq, labels = data.block(row["block"])
        start = row["core_start"] - half
        direction = -1 if row["strand"] == "-" else 1
        seq, labels = seq[::direction], labels[::direction]
        for other in test.filter(pl.col("chrom") == row["chrom"]).iter_rows(named=True):
            lo, hi = (
                max(other["core_start"], start) - start,
                min(other["core_end"], start + row["length"]) - start,
            )
            if hi > lo:
                assert (seq[lo:hi] == 4).all() and (labels[lo:hi] == -1).all()
                checked += hi - lo
    assert checked == counts["masked_nt"]
    again, _ = build(
        tmp_path / "again",
        genome,
        genes,
        no_sites(),
        clusters=clusters,
        context=2 * half,
        fractions={"train": 0.6, "validation": 0.2, "test": 0.2},
    )
    assert again.blocks.equals(data.blocks) and (again.sequence == data.sequence).all()  # the same folder


def test_split_fractions_follow_labelled_nt_and_the_seed():
    weights = np.full(100, 10.0)
    chosen = splits.cut_units(weights, {"train": 0.7, "validation": 0.1, "test": 0.2}, seed=3)
    assert np.bincount(chosen, minlength=3).tolist() == [70, 10, 20]
    assert (splits.cut_units(weights, {"train": 0.7, "validation": 0.1, "test": 0.2}, seed=3) == chosen).all()
    few = splits.cut_units(
        np.array([100.0, 1.0, 1.0]), {"train": 0.8, "validation": 0.1, "test": 0.1}, seed=0
    )
    assert sorted(few.tolist()) == [0, 1, 2]


def test_k_folds_test_every_unit_once_and_never_train_on_it():
    weights = np.random.default_rng(1).integers(5, 50, 40).astype(np.float64)
    per_fold = [splits.fold_units(weights, 0.1, seed=4, folds=4, fold=k) for k in range(4)]
    tested = np.array([(chosen == 2) for chosen in per_fold])
    assert (tested.sum(axis=0) == 1).all()  # every unit is test in exactly one fold
    for chosen in per_fold:
        assert 0.15 < weights[chosen == 2].sum() / weights.sum() < 0.35  # about a quarter each
        validation = weights[chosen == 1].sum() / weights.sum()
        assert 0 < validation <= 0.1 + weights.max() / weights.sum()
        assert (chosen == 0).sum() > 0
    with pytest.raises(InputError, match="base_data.fold: fold 4 of 4 folds"):
        splits.fold_units(weights, 0.1, seed=4, folds=4, fold=4)


def test_folds_in_plan_blocks_hold_whole_clusters_out():
    genes, clusters = many_genes()
    genome = random_genome({"c1": 14000, "c2": 14000})
    seen = []
    for fold in range(2):
        blocks = plan_blocks(genes, clusters, genome, settings(folds=2, fold=fold))
        test_units = set(blocks.filter(pl.col("split") == "test")["cluster"])
        assert test_units and not test_units & set(blocks.filter(pl.col("split") != "test")["cluster"])
        test = blocks.filter(pl.col("split") == "test")
        seen.append(set(zip(test["chrom"], test["core_start"], strict=True)))
    assert not seen[0] & seen[1]


def test_chromosome_split_and_bad_settings_are_one_line_errors():
    genes, clusters = many_genes()
    genome = random_genome({"c1": 14000, "c2": 14000})
    blocks = plan_blocks(genes, clusters, genome, settings(split="chromosome", test_chromosomes=["c2"]))
    assert set(blocks.filter(pl.col("chrom") == "c2")["split"]) == {"test"}
    assert set(blocks.filter(pl.col("chrom") == "c1")["split"]) == {"train"}
    with pytest.raises(InputError, match="base_data.test_chromosomes: chromosome 'chrX' not in the genome"):
        plan_blocks(genes, clusters, genome, settings(split="chromosome", test_chromosomes=["chrX"]))
    with pytest.raises(InputError, match="base_data.fractions: train \\+ validation \\+ test must be 1"):
        plan_blocks(
            genes, clusters, genome, settings(fractions={"train": 0.5, "validation": 0.1, "test": 0.1})
        )
