"""Annotation geometry and text, checked before sites are made: overlapping exons, exons outside
their transcript, gene or chromosome, one gene_id in two places, ids that are not UTF-8, and
GFF3 features told apart by ID when their transcript_id is shared. Each case used to pass silently."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.test_annotation import TOY_FASTA, fails_with, gtf_exon, run_annotate, toy_gtf
from workflow_scripts.calling.annotation import Region, build_site_tables
from workflow_scripts.calling.gff import read_annotation
from workflow_scripts.errors import InputError


def refusal(path: Path) -> str:
    with pytest.raises(InputError) as error:
        build_site_tables(read_annotation(path), "all")
    return str(error.value)


def test_nested_exon_is_refused_not_read_as_an_intron(tmp_path):
    """Exon 150-200 inside exon 100-300: the old reader put a donor at 200, inside an exon."""
    path = toy_gtf(
        tmp_path,
        [
            gtf_exon("chr1", 100, 300, "+", "g", "t"),
            gtf_exon("chr1", 150, 200, "+", "g", "t"),
            gtf_exon("chr1", 400, 500, "+", "g", "t"),
        ],
    )
    assert refusal(path) == f"{path}: lines 1 and 2: exons 100-300 and 150-200 of transcript 't' overlap"


def test_abutting_exons_make_no_site(tmp_path):
    path = toy_gtf(
        tmp_path,
        [
            gtf_exon("chr1", 100, 200, "+", "g", "t"),
            gtf_exon("chr1", 201, 250, "+", "g", "t"),
            gtf_exon("chr1", 300, 350, "+", "g", "t"),
        ],
    )
    tables = build_site_tables(read_annotation(path), "all")
    assert sorted(tables.sites["position"]) == [250, 300] and tables.summary["abutting_exons"] == 1


def test_gene_line_narrower_than_its_exons_is_refused(tmp_path):
    """The gene line sets the span that is scored: sites outside it were silently never called."""
    path = toy_gtf(
        tmp_path,
        [
            'chr1\tsrc\tgene\t100\t250\t.\t+\t.\tgene_id "g"; gene_biotype "protein_coding";',
            gtf_exon("chr1", 100, 200, "+", "g", "t"),
            gtf_exon("chr1", 300, 350, "+", "g", "t"),
        ],
    )
    assert refusal(path) == (
        f"{path}: line 3: exon chr1:300-350 lies outside its gene 'g' (line 1: chr1:100-250)"
    )


def test_exon_outside_its_gff3_transcript_is_refused(tmp_path):
    path = tmp_path / "a.gff3"
    path.write_text(
        "##gff-version 3\n"
        "chr1\tsrc\tgene\t1\t400\t.\t+\t.\tID=g1;biotype=protein_coding\n"
        "chr1\tsrc\tmRNA\t1\t200\t.\t+\t.\tID=t1;Parent=g1\n"
        "chr1\tsrc\texon\t1\t50\t.\t+\t.\tParent=t1\n"
        "chr1\tsrc\texon\t100\t300\t.\t+\t.\tParent=t1\n"
    )
    assert (
        refusal(path)
        == f"{path}: line 5: exon chr1:100-300 lies outside its transcript 't1' (line 3: chr1:1-200)"
    )


def test_one_gene_id_on_two_chromosomes_is_refused(tmp_path):
    """The old reader made one gene spanning both chromosomes' coordinates."""
    path = toy_gtf(
        tmp_path,
        [
            gtf_exon("chr1", 10, 30, "+", "g", "t1"),
            gtf_exon("chr1", 60, 80, "+", "g", "t1"),
            gtf_exon("chr2", 10, 30, "+", "g", "t2"),
            gtf_exon("chr2", 60, 80, "+", "g", "t2"),
        ],
    )
    assert refusal(path) == (
        f"{path}: gene_id 'g': exons on chr1 and chr2 (first at line 1); one gene lies on one chromosome and strand"
    )


def test_exon_past_the_chromosome_end_is_one_line(tmp_path, capsys):
    """The gene line fits the 400-nt chromosome, its last exon does not."""
    genome = tmp_path / "genome.fa"
    genome.write_text(TOY_FASTA)
    path = toy_gtf(
        tmp_path,
        [
            'chr1\tsrc\tgene\t10\t500\t.\t+\t.\tgene_id "g"; gene_biotype "protein_coding";',
            gtf_exon("chr1", 10, 30, "+", "g", "t"),
            gtf_exon("chr1", 300, 500, "+", "g", "t"),
        ],
    )
    line = fails_with(capsys, tmp_path, path, genome)
    assert line == (
        f"errorseq: error: {path}: line 3: exon ends at 500, past the end of chromosome 'chr1' (400 nt); "
        "is this the genome it annotates?"
    )
    assert not (tmp_path / "out" / "sites.parquet").exists()


def test_latin1_ids_are_refused_not_fused(tmp_path, capsys):
    """'gène' and 'gêne' in Latin-1 both decoded to 'g\ufffdne' and became one gene."""
    path = tmp_path / "latin1.gtf"
    lines = [
        gtf_exon("chr1", 10, 30, "+", "gène", "t1"),
        gtf_exon("chr1", 60, 80, "+", "gène", "t1"),
        gtf_exon("chr1", 110, 130, "+", "gêne", "t2"),
        gtf_exon("chr1", 160, 180, "+", "gêne", "t2"),
    ]
    path.write_bytes(("\n".join(lines) + "\n").encode("latin-1"))
    line = fails_with(capsys, tmp_path, path)
    assert line == f"errorseq: error: {path}: line 1: not UTF-8 text (byte 0xe8 at column 37)"


def test_percent_encoded_latin1_gff3_id_is_refused(tmp_path):
    path = tmp_path / "a.gff3"
    path.write_text(
        "##gff-version 3\n"
        "chr1\tsrc\tgene\t1\t400\t.\t+\t.\tID=g%E8ne\n"
        "chr1\tsrc\texon\t1\t50\t.\t+\t.\tParent=g%E8ne\n"
        "chr1\tsrc\texon\t100\t300\t.\t+\t.\tParent=g%E8ne\n"
    )
    with pytest.raises(InputError, match=r"line 2 attributes: 'g%E8ne' does not decode as UTF-8"):
        read_annotation(path)


def test_gff3_transcripts_sharing_a_transcript_id_stay_apart(tmp_path):
    """Two mRNAs with their own IDs and one transcript_id (RefSeq's X/Y copies) are two transcripts:
    under one name their exons fused into one transcript with a false intron."""
    path = tmp_path / "a.gff3"
    path.write_text(
        "##gff-version 3\n"
        "chr1\tsrc\tgene\t1\t400\t.\t+\t.\tID=g1;biotype=protein_coding\n"
        "chr1\tsrc\tmRNA\t1\t100\t.\t+\t.\tID=rna-1;Parent=g1;transcript_id=NM_1\n"
        "chr1\tsrc\texon\t1\t20\t.\t+\t.\tParent=rna-1\n"
        "chr1\tsrc\texon\t60\t100\t.\t+\t.\tParent=rna-1\n"
        "chr1\tsrc\tmRNA\t200\t400\t.\t+\t.\tID=rna-2;Parent=g1;transcript_id=NM_1\n"
        "chr1\tsrc\texon\t200\t250\t.\t+\t.\tParent=rna-2\n"
        "chr1\tsrc\texon\t300\t400\t.\t+\t.\tParent=rna-2\n"
    )
    tables = build_site_tables(read_annotation(path), "all")
    assert set(tables.sites["transcript_id"]) == {"rna-1", "rna-2"}
    assert sorted(tables.sites["position"]) == [20, 60, 250, 300]  # no site at 100 or 200


def test_real_annotations_pass_the_checks(tmp_path):
    sites, genes, summary = run_annotate(
        tmp_path, Path(__file__).parents[1] / "data" / "athaliana_chr1_1-14000.gff3"
    )
    assert sites.height > 0 and summary["abutting_exons"] == 0


def test_single_exon_genes_only_is_refused_at_the_annotation(tmp_path):
    """It used to pass here with 'nan% GT' and fail later on calls.parquet: 'no TP rows'."""
    path = toy_gtf(
        tmp_path, [gtf_exon("chr1", 10, 30, "+", "g1", "t1"), gtf_exon("chr1", 60, 80, "-", "g2", "t2")]
    )
    assert refusal(path) == (
        f"{path}: exon: none of the 2 selected transcripts has two exons: no intron, so no splice site "
        "(single-exon genes only?)"
    )


def test_region_on_a_chromosome_named_otherwise_gets_a_hint(tmp_path):
    path = toy_gtf(
        tmp_path, [gtf_exon("chr1", 10, 30, "+", "g", "t"), gtf_exon("chr1", 60, 80, "+", "g", "t")]
    )
    with pytest.raises(InputError) as error:
        build_site_tables(read_annotation(path), "all", region=Region.parse("1:1-50000"))
    assert (
        str(error.value)
        == f"{path}: calling.region: no selected gene lies inside 1:1-50000; did you mean 'chr1'?"
    )
