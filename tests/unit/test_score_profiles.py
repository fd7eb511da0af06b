"""The base model's score profiles along each window (calling/score_profiles.py) and the extract rule
that writes them: a hand-made genome and scores table whose every expected value can be written
down, on both strands, with unscored positions (outside the genes, past a chromosome end) at 0.0."""

from __future__ import annotations

import json

import polars as pl
import pytest

from tests.calls_fixtures import extract_args
from workflow_scripts.calling import chromosome_windows
from workflow_scripts.calling.score_profiles import (
    ACCEPTOR_SCORES,
    DONOR_SCORES,
    UNSCORED,
    with_score_profiles,
)
from workflow_scripts.calling.scores import ScoreTables
from workflow_scripts.config.types import ExperimentSection, complete_typed_section
from workflow_scripts.data.fasta import load_fasta, open_genome
from workflow_scripts.data.quality import read_notes
from workflow_scripts.data.windows import drop_all_n, split_windows, windows_from_calls
from workflow_scripts.errors import InputError
from workflow_scripts.rules.extract import main as extract_main

CHROMS = {"chr1": 40, "chr2": 12}
# (gene_id, chrom, strand, start, end): chr1 + whole, chr1 - 11..30, chr2 + whole, chr2 - 1..8
GENES = [
    ("g1", "chr1", "+", 1, 40),
    ("g2", "chr1", "-", 11, 30),
    ("g3", "chr2", "+", 1, 12),
    ("g4", "chr2", "-", 1, 8),
]
STRAND_BASE = {("chr1", "+"): 0.0, ("chr1", "-"): 0.4, ("chr2", "+"): 0.6, ("chr2", "-"): 0.8}


def value(chrom: str, strand: str, position: int, splice_type: str) -> float:
    """The made-up score at a position: a different number for every chromosome, strand and type."""
    return STRAND_BASE[(chrom, strand)] + position / (100 if splice_type == "donor" else 200)


def genes_frame() -> pl.DataFrame:
    return pl.DataFrame(
        GENES, schema=["gene_id", "chrom", "strand", "start", "end"], orient="row"
    ).with_columns(biotype=pl.lit("protein_coding"))


def scores_frame() -> pl.DataFrame:
    rows = [
        (gene, chrom, strand, p, value(chrom, strand, p, "donor"), value(chrom, strand, p, "acceptor"))
        for gene, chrom, strand, start, end in GENES
        for p in range(start, end + 1)
    ]
    return pl.DataFrame(
        rows, schema=["gene_id", "chrom", "strand", "position", "donor", "acceptor"], orient="row"
    )


def expected(chrom: str, strand: str, site: int, flank: int, splice_type: str) -> list[float]:
    """The profile by hand: window base i is genomic position site - flank + i on +, site + flank - i
    on -; a position outside its strand's gene spans or the chromosome is 0.0."""
    spans = [(s, e) for _, c, st, s, e in GENES if (c, st) == (chrom, strand)]
    values = []
    for i in range(2 * flank + 1):
        position = site - flank + i if strand == "+" else site + flank - i
        scored = any(s <= position <= e for s, e in spans) and 1 <= position <= CHROMS[chrom]
        values.append(value(chrom, strand, position, splice_type) if scored else UNSCORED)
    return values


@pytest.fixture
def tables(tmp_path) -> ScoreTables:
    scores = tmp_path / "scores.parquet"
    scores_frame().write_parquet(scores)
    return ScoreTables([scores], genes_frame(), CHROMS)


CALLS = pl.DataFrame(
    {
        "chrom": ["chr1", "chr1", "chr1", "chr2", "chr2", "chr2"],
        "position": [20, 12, 29, 2, 11, 3],
        "strand": ["+", "-", "-", "+", "-", "-"],
    }
)


def test_profiles_follow_the_reading_direction_on_both_strands(tables):
    frame, report = with_score_profiles(CALLS, tables.by_chromosome(), CHROMS, flank=3)
    assert frame.schema[DONOR_SCORES] == pl.List(pl.Float32)
    assert frame.schema[ACCEPTOR_SCORES] == pl.List(pl.Float32)
    for row in frame.iter_rows(named=True):
        for splice_type, column in (("donor", DONOR_SCORES), ("acceptor", ACCEPTOR_SCORES)):
            want = expected(row["chrom"], row["strand"], row["position"], 3, splice_type)
            assert row[column] == pytest.approx(want, abs=1e-6), (row, splice_type)
    minus = frame.row(1, named=True)  # chr1 - 12: bases read 15, 14, ..., 9; 9 and 10 lie outside g2
    assert minus[DONOR_SCORES][0] == pytest.approx(0.4 + 15 / 100)
    assert minus[DONOR_SCORES][5:] == [UNSCORED, UNSCORED]
    assert report["bases"] == 6 * 7 and report["scored_bases"] == sum(
        v != UNSCORED
        for row in frame.iter_rows(named=True)
        for v in expected(row["chrom"], row["strand"], row["position"], 3, "donor")
    )


def test_unscored_positions_are_zero_past_the_chromosome_ends_and_outside_the_genes(tables):
    frame, _ = with_score_profiles(CALLS, tables.by_chromosome(), CHROMS, flank=3)
    chr2_plus, chr2_minus_end, chr2_minus_start = (frame.row(i, named=True) for i in (3, 4, 5))
    assert chr2_plus[DONOR_SCORES][:2] == [UNSCORED, UNSCORED]  # positions -1 and 0
    assert chr2_plus[DONOR_SCORES][2] == pytest.approx(0.6 + 1 / 100)
    assert chr2_minus_end[ACCEPTOR_SCORES][:6] == [UNSCORED] * 6  # 14..9 on -: past the end, outside g4
    assert chr2_minus_end[DONOR_SCORES] == [UNSCORED] * 6 + [pytest.approx(0.8 + 8 / 100)]
    assert chr2_minus_start[DONOR_SCORES][-1] == UNSCORED  # position 0 never reads the previous strand


def test_only_the_chromosomes_asked_for_are_read(tables):
    assert [chrom for chrom, _ in tables.by_chromosome({"chr2"})] == ["chr2"]
    frame, report = with_score_profiles(
        CALLS.filter(pl.col("chrom") == "chr2"), tables.by_chromosome({"chr2"}), CHROMS, flank=3
    )
    assert frame.height == 3 and report["scored_bases"] > 0


def test_large_tables_are_looked_up_in_chunks(tables, monkeypatch):
    whole, _ = with_score_profiles(CALLS, tables.by_chromosome(), CHROMS, flank=3)
    monkeypatch.setattr("workflow_scripts.calling.score_profiles.CHUNK_BASES", 7)  # one window a chunk
    chunked, _ = with_score_profiles(CALLS, tables.by_chromosome(), CHROMS, flank=3)
    assert chunked.equals(whole)


# ---- the extract rule ----------------------------------------------------------------------------
GENOME = {"chr1": "AAAACCCCGGGGTTTTACGTACGTAAAACCCCGGGGTTTT", "chr2": "ACGTTGCAACGT"}
EXPERIMENT = {"name": "fp", "error_label": "FP", "correct_label": "TP"}


def extract_workdir(tmp_path):
    fasta = tmp_path / "g.fa"
    fasta.write_text("".join(f">{name}\n{sequence}\n" for name, sequence in GENOME.items()))
    load_fasta(fasta).save_cached(tmp_path / "idx")
    scores, genes = tmp_path / "scores.parquet", tmp_path / "genes.parquet"
    scores_frame().write_parquet(scores)
    genes_frame().write_parquet(genes)
    calls = CALLS.with_columns(
        position=pl.Series([20, 12, 29, 2, 7, 3]),  # every site scored, as make_calls' are
        gene_id=pl.Series(["g1", "g2", "g2", "g3", "g4", "g4"]),
        splice_type=pl.Series(["donor", "acceptor", "donor", "donor", "acceptor", "donor"]),
        pred_type=pl.Series(["FP", "TP", "FP", "TP", "FP", "TP"]),
    )
    site_scores = [
        value(c, s, p, t)
        for c, p, s, t in calls.select("chrom", "position", "strand", "splice_type").iter_rows()
    ]
    calls = calls.with_columns(score=pl.Series(site_scores))
    calls.write_parquet(tmp_path / "calls.parquet")
    return tmp_path / "idx", tmp_path / "calls.parquet", scores, genes


def extract_config(flank: int = 3) -> str:
    split = {"fractions": {"train": 0.34, "val": 0.33, "test": 0.33}, "seed": 1}
    return json.dumps({"experiment": EXPERIMENT, "window": {"flank": flank}, "split": split})


def run_extract(tmp_path, name: str, with_scores: bool, monkeypatch) -> pl.DataFrame:
    monkeypatch.setattr("workflow_scripts.rules.extract.check_splits", lambda *args: [])  # 6 calls
    genome, calls, scores, genes = extract_workdir(tmp_path)
    args = extract_args(genome, calls, tmp_path / name, extract_config())
    extract_main(args + (["--scores", str(scores), "--genes", str(genes)] if with_scores else []))
    return pl.read_parquet(tmp_path / name)


def test_extract_with_scores_writes_profiles_aligned_with_the_sequence(tmp_path, monkeypatch, capsys):
    windows = run_extract(tmp_path, "w.parquet", True, monkeypatch)
    assert windows.columns[-2:] == [DONOR_SCORES, ACCEPTOR_SCORES]
    assert windows.schema[DONOR_SCORES] == pl.List(pl.Float32)
    lengths = windows.select(
        pl.col(DONOR_SCORES, ACCEPTOR_SCORES).list.len(), pl.col("sequence").str.len_bytes()
    )
    assert (lengths[DONOR_SCORES] == lengths["sequence"]).all() and (
        lengths[ACCEPTOR_SCORES] == lengths["sequence"]
    ).all()
    for row in windows.iter_rows(named=True):
        at_site = row[DONOR_SCORES if row["splice_type"] == "donor" else ACCEPTOR_SCORES][row["site_offset"]]
        assert at_site == pytest.approx(row["score"], abs=1e-6)
        want = expected(row["chrom"], row["strand"], row["position"], 3, "acceptor")
        assert row[ACCEPTOR_SCORES] == pytest.approx(want, abs=1e-6)
    assert "window bases scored" in capsys.readouterr().err


def test_extract_without_scores_has_no_profile_columns(tmp_path, monkeypatch):
    windows = run_extract(tmp_path, "w.parquet", False, monkeypatch)
    assert DONOR_SCORES not in windows.columns and ACCEPTOR_SCORES not in windows.columns
    with_profiles = run_extract(tmp_path, "p.parquet", True, monkeypatch)
    assert with_profiles.drop(DONOR_SCORES, ACCEPTOR_SCORES).equals(windows)


def test_scores_need_genes(tmp_path):
    genome, calls, scores, _ = extract_workdir(tmp_path)
    with pytest.raises(InputError, match="--scores/--genes"):
        extract_main(
            extract_args(genome, calls, tmp_path / "w.parquet", extract_config()) + ["--scores", str(scores)]
        )


def whole_table_windows(tmp_path) -> pl.DataFrame:
    """The table as extract wrote it before going by chromosome: every window and profile at once."""
    genome_dir, calls, scores, genes = extract_workdir(tmp_path)
    genome = open_genome(genome_dir)
    experiment = ExperimentSection.from_completed(EXPERIMENT)
    frame = windows_from_calls(genome, calls, experiment, complete_typed_section("window", {"flank": 3}))
    frame, _ = drop_all_n(frame)
    tables = ScoreTables([scores], genes_frame(), genome.chrom_lengths())
    frame, _ = with_score_profiles(frame, tables.by_chromosome(), genome.chrom_lengths(), 3)
    split = complete_typed_section("split", json.loads(extract_config())["split"])
    return split_windows(frame, split, None, calls)


@pytest.mark.parametrize("chunk_rows", [1, 2, 200_000])
def test_extract_by_chromosome_and_chunk_writes_the_whole_tables_rows(tmp_path, monkeypatch, chunk_rows):
    monkeypatch.setattr(chromosome_windows, "CHUNK_ROWS", chunk_rows)
    windows = run_extract(tmp_path, "w.parquet", True, monkeypatch)
    (tmp_path / "whole").mkdir()
    assert windows.equals(whole_table_windows(tmp_path / "whole"))
    assert read_notes(tmp_path / "w.parquet")["windows"] == windows.height == 6


def test_calls_out_of_chromosome_order_come_out_chromosome_by_chromosome(tmp_path, monkeypatch):
    """Chromosomes in the order they first appear, each one's calls in table order (a table whose
    chromosomes come in runs keeps its order: the test above, whose chr2 rows are not in genome
    position order)."""
    monkeypatch.setattr(chromosome_windows, "CHUNK_ROWS", 2)
    monkeypatch.setattr("workflow_scripts.rules.extract.check_splits", lambda *args: [])
    genome, calls, scores, genes = extract_workdir(tmp_path)
    shuffled = pl.read_parquet(calls)[[3, 0, 4, 1, 5, 2]]
    shuffled.write_parquet(calls)
    extract_main(
        extract_args(genome, calls, tmp_path / "w.parquet", extract_config())
        + ["--scores", str(scores), "--genes", str(genes)]
    )
    windows = pl.read_parquet(tmp_path / "w.parquet")
    assert windows["chrom"].to_list() == ["chr2"] * 3 + ["chr1"] * 3
    assert windows["position"].to_list() == [2, 7, 3, 20, 12, 29]
    assert windows["id"].to_list() == ["fp:1", "fp:3", "fp:5", "fp:2", "fp:4", "fp:6"]
