"""Annotated splice sites from GTF/GFF3: coordinate convention on real A. thaliana genes, selection,
shared sites, and one-line errors for bad input. The whole chromosome and the real SpliceAI
models: tests/workflow/test_annotation.py."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import polars as pl
import pytest

from workflow_scripts.calling.annotation import Region, build_site_tables
from workflow_scripts.calling.gff import read_annotation
from workflow_scripts.data.fasta import load_fasta
from workflow_scripts.errors import run_cli
from workflow_scripts.rules import annotate_sites

DATA = Path(__file__).parents[1] / "data"
FASTA = DATA / "athaliana_chr1_1-14000.fa"
GTF = DATA / "athaliana_chr1_1-14000.gtf.gz"
GFF3 = DATA / "athaliana_chr1_1-14000.gff3"
COMPLEMENT = str.maketrans("ACGT", "TGCA")


def reverse_complement(text: str) -> str:
    return text.translate(COMPLEMENT)[::-1]


def intron_pair(chromosome: str, position: int, strand: str, splice_type: str) -> str:
    """The two intron bases next to a site, on its strand, read straight from the sequence.

    Convention: donor = last exon base before the intron, acceptor = first exon base after it.
    chromosome[i] is 1-based base i + 1.
    """
    if strand == "+":
        return (
            chromosome[position : position + 2]
            if splice_type == "donor"
            else chromosome[position - 3 : position - 1]
        )
    if splice_type == "donor":
        return reverse_complement(chromosome[position - 3 : position - 1])
    return reverse_complement(chromosome[position : position + 2])


def run_annotate(tmp_path: Path, annotation: Path, genome: Path = FASTA, calling: dict | None = None):
    out = tmp_path / "out"
    argv = [
        "--annotation",
        str(annotation),
        "--genome",
        str(genome),
        "--out-sites",
        str(out / "sites.parquet"),
        "--out-genes",
        str(out / "genes.parquet"),
        "--out-exons",
        str(out / "exons.parquet"),
        "--out-summary",
        str(out / "summary.json"),
        "--config",
        json.dumps({"calling": calling or {}}),
    ]
    run_cli(annotate_sites.main, argv)
    return (
        pl.read_parquet(out / "sites.parquet"),
        pl.read_parquet(out / "genes.parquet"),
        json.loads((out / "summary.json").read_text()),
    )


def fails_with(capsys, tmp_path, annotation: Path, genome: Path = FASTA, calling: dict | None = None) -> str:
    with pytest.raises(SystemExit) as exit_info:
        run_annotate(tmp_path, annotation, genome, calling)
    assert exit_info.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


@pytest.mark.parametrize("annotation", [GTF, GFF3], ids=["gtf.gz", "gff3"])
def test_real_sites_carry_gt_and_ag_on_both_strands(tmp_path, annotation):
    sites, genes, summary = run_annotate(tmp_path, annotation)
    chromosome = load_fasta(FASTA).chromosome("NC_003070.9")
    assert set(sites["strand"]) == {"+", "-"} and set(sites["splice_type"]) == {"donor", "acceptor"}
    for row in sites.iter_rows(named=True):
        expected = "GT" if row["splice_type"] == "donor" else "AG"
        assert intron_pair(chromosome, row["position"], row["strand"], row["splice_type"]) == expected, row
    assert summary["donor_GT"] == 1.0 and summary["acceptor_AG"] == 1.0
    assert sites.height == 31 and genes.height == 3  # protein_coding only: the lncRNA AT1G03987 is left out
    assert sites.schema["position"] == pl.Int64


def test_named_sites_follow_the_convention(tmp_path):
    """AT1G01010 (+): exon 1 is 3631-3913, exon 2 starts at 3996. AT1G01020 (-): its first exon
    (transcript order) is 8594-9130 and its second 8417-8464."""
    sites, genes, _ = run_annotate(tmp_path, GTF)
    keyed = {
        (r["position"], r["strand"], r["splice_type"]): r["gene_id"] for r in sites.iter_rows(named=True)
    }
    assert keyed[(3913, "+", "donor")] == "AT1G01010"
    assert keyed[(3996, "+", "acceptor")] == "AT1G01010"
    assert keyed[(8594, "-", "donor")] == "AT1G01020"
    assert keyed[(8464, "-", "acceptor")] == "AT1G01020"
    spans = {r["gene_id"]: (r["start"], r["end"], r["strand"]) for r in genes.iter_rows(named=True)}
    assert spans["AT1G01020"] == (6788, 9130, "-")


def test_gtf_and_gff3_give_the_same_sites(tmp_path):
    from_gtf = build_site_tables(read_annotation(GTF), ["protein_coding"]).sites
    from_gff3 = build_site_tables(read_annotation(GFF3), ["protein_coding"]).sites
    columns = ["transcript_id", "chrom", "position", "strand", "splice_type", "n_transcripts"]
    assert from_gtf.select(columns).equals(from_gff3.select(columns))
    # GFF3 genes are named by their ID (NCBI: gene-<locus>), GTF genes by gene_id
    assert from_gff3["gene_id"].str.strip_prefix("gene-").equals(from_gtf["gene_id"])


def test_plain_and_gzip_read_the_same(tmp_path):
    plain = tmp_path / "slice.gtf"
    plain.write_bytes(gzip.decompress(GTF.read_bytes()))
    assert build_site_tables(read_annotation(plain), "all").sites.equals(
        build_site_tables(read_annotation(GTF), "all").sites
    )


def test_biotypes_transcripts_and_region(tmp_path):
    annotation = read_annotation(GTF)
    every = build_site_tables(annotation, "all")
    assert "lncRNA" in every.genes["biotype"].to_list()
    coding = build_site_tables(annotation, ["protein_coding"])
    first = build_site_tables(annotation, ["protein_coding"], "first")
    assert first.summary["transcripts"] == 3 < coding.summary["transcripts"]
    key = ["chrom", "position", "strand", "splice_type"]
    assert first.sites.join(coding.sites, on=key, how="anti").height == 0
    assert first.sites.height < coding.sites.height
    assert "NM_001331242.1" in set(first.sites["transcript_id"])  # AT1G01020's first transcript in the file
    inside = build_site_tables(annotation, ["protein_coding"], region=Region.parse("NC_003070.9:6000-10000"))
    assert inside.genes["gene_id"].to_list() == ["AT1G01020"]


TOY_FASTA = ">chr1\n" + "ACGT" * 100 + "\n"


def toy_gtf(tmp_path: Path, lines: list[str], name: str = "toy.gtf") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


def gtf_exon(chrom, start, end, strand, gene, transcript, extra=""):
    return (
        f'{chrom}\tsrc\texon\t{start}\t{end}\t.\t{strand}\t.\tgene_id "{gene}"; '
        f'transcript_id "{transcript}"; gene_biotype "protein_coding";{extra}'
    )


def test_a_canonical_tag_on_the_transcript_line_alone_picks_the_transcript(tmp_path):
    """GTFs that tag transcripts on their transcript line only (not on each exon) used to fall back
    silently to the gene's first transcript under calling.transcripts canonical."""
    t2_line = (
        'chr1\tsrc\ttranscript\t10\t80\t.\t-\t.\tgene_id "g"; transcript_id "t2"; '
        'tag "basic"; tag "MANE_Select";'
    )
    path = toy_gtf(
        tmp_path,
        [
            gtf_exon("chr1", 10, 30, "-", "g", "t1"),
            gtf_exon("chr1", 60, 80, "-", "g", "t1"),
            t2_line,
            gtf_exon("chr1", 10, 40, "-", "g", "t2"),
            gtf_exon("chr1", 70, 80, "-", "g", "t2"),
        ],
    )
    tables = build_site_tables(read_annotation(path), "all", "canonical")
    assert set(tables.sites["transcript_id"]) == {"t2"}
    assert tables.summary["canonical_fallbacks"] == 0


def test_site_shared_by_overlapping_genes_is_one_site(tmp_path):
    """Genes gB and gA share the donor at 30 and the acceptor at 60: one row each, gene gA."""
    path = toy_gtf(
        tmp_path,
        [
            gtf_exon("chr1", 10, 30, "+", "gB", "tB"),
            gtf_exon("chr1", 60, 80, "+", "gB", "tB"),
            gtf_exon("chr1", 5, 30, "+", "gA", "tA"),
            gtf_exon("chr1", 60, 90, "+", "gA", "tA"),
            gtf_exon("chr1", 120, 140, "+", "gA", "tA"),
        ],
    )
    tables = build_site_tables(read_annotation(path), "all")
    shared = tables.sites.filter(pl.col("position").is_in([30, 60]))
    assert shared.height == 2
    assert shared["gene_id"].to_list() == ["gA", "gA"] and shared["n_transcripts"].to_list() == [2, 2]
    assert tables.sites.height == 4 and tables.summary["shared_by_genes"] == 2


def test_canonical_tag_picks_the_transcript(tmp_path):
    path = toy_gtf(
        tmp_path,
        [
            gtf_exon("chr1", 10, 30, "-", "g", "t1"),
            gtf_exon("chr1", 60, 80, "-", "g", "t1"),
            gtf_exon("chr1", 10, 40, "-", "g", "t2", ' tag "basic"; tag "Ensembl_canonical";'),
            gtf_exon("chr1", 70, 80, "-", "g", "t2", ' tag "Ensembl_canonical";'),
        ],
    )
    sites = build_site_tables(read_annotation(path), "all", "canonical").sites
    assert set(sites["transcript_id"]) == {"t2"}
    # minus strand: the donor is the start of the right-hand exon, the acceptor the end of the left one
    assert {(r["position"], r["splice_type"]) for r in sites.iter_rows(named=True)} == {
        (70, "donor"),
        (40, "acceptor"),
    }


def test_gtf_without_exons_is_one_line(tmp_path, capsys):
    path = toy_gtf(
        tmp_path,
        [
            'chr1\tsrc\tgene\t1\t100\t.\t+\t.\tgene_id "g"; gene_biotype "protein_coding";',
            'chr1\tsrc\tCDS\t10\t90\t.\t+\t0\tgene_id "g"; transcript_id "t";',
        ],
    )
    line = fails_with(capsys, tmp_path, path)
    assert (
        line
        == f"errorseq: error: {path}: feature 'exon': no exon lines in this GTF file; splice sites need exons"
    )


def test_gff3_with_missing_parent_is_one_line(tmp_path, capsys):
    path = tmp_path / "orphans.gff3"
    path.write_text(
        "##gff-version 3\n"
        "chr1\tsrc\tgene\t1\t200\t.\t+\t.\tID=gene1;gene_biotype=protein_coding\n"
        "chr1\tsrc\tmRNA\t1\t200\t.\t+\t.\tID=rna1;Parent=gene1\n"
        "chr1\tsrc\texon\t1\t50\t.\t+\t.\tID=e1;Parent=rna1\n"
        "chr1\tsrc\texon\t100\t200\t.\t+\t.\tID=e2;Parent=rna2\n"
    )
    line = fails_with(capsys, tmp_path, path)
    assert line == f"errorseq: error: {path}: line 5 Parent: feature 'rna2' is not defined in the file"


def test_gtf_exon_without_transcript_id_is_one_line(tmp_path, capsys):
    path = toy_gtf(tmp_path, ['chr1\tsrc\texon\t1\t100\t.\t+\t.\tgene_id "g";'])
    line = fails_with(capsys, tmp_path, path)
    assert (
        line == f"errorseq: error: {path}: line 1 transcript_id: exon line without a transcript_id attribute"
    )


def test_chromosome_names_that_differ_get_the_calls_hint(tmp_path, capsys):
    genome = tmp_path / "genome.fa"
    genome.write_text(TOY_FASTA.replace(">chr1", ">1"))
    path = toy_gtf(
        tmp_path, [gtf_exon("chr1", 10, 30, "+", "g", "t"), gtf_exon("chr1", 60, 80, "+", "g", "t")]
    )
    line = fails_with(capsys, tmp_path, path, genome)
    assert line.startswith(
        f"errorseq: error: {path}: seqid: chromosome 'chr1' not in genome; did you mean '1'?"
    )


def test_unknown_biotype_names_what_is_there(tmp_path, capsys):
    line = fails_with(capsys, tmp_path, GTF, calling={"biotypes": ["miRNA"]})
    assert line == (
        f"errorseq: error: {GTF}: biotype: no gene of biotype miRNA (found: lncRNA, protein_coding); "
        "set calling.biotypes to one of them, or all"
    )


ENSEMBL_GFF3 = """##gff-version 3
##sequence-region chr1 1 400
chr1\tensembl\tgene\t10\t200\t.\t+\t.\tID=gene:G1;gene_id=G1;biotype=protein_coding
chr1\tensembl\tmRNA\t10\t200\t.\t+\t.\tID=transcript:T1;Parent=gene:G1;gene_id=G1;transcript_id=T1;tag=basic,Ensembl_canonical
chr1\tensembl\texon\t10\t50\t.\t+\t.\tParent=transcript:T1;Name=T1-E1
chr1\tensembl\texon\t100\t200\t.\t+\t.\tParent=transcript:T1;Name=T1-E2
chr1\tensembl\tCDS\t20\t50\t.\t+\t0\tID=CDS:P1;Parent=transcript:T1
chr1\tensembl\tmRNA\t10\t200\t.\t+\t.\tID=transcript:T2;Parent=gene:G1;gene_id=G1;transcript_id=T2;tag=basic,non_canonical_U12
chr1\tensembl\texon\t10\t60\t.\t+\t.\tParent=transcript:T2;Name=T2-E1
chr1\tensembl\texon\t120\t200\t.\t+\t.\tParent=transcript:T2;Name=T2-E2
chr1\tensembl\tCDS\t20\t60\t.\t+\t0\tID=CDS:P2;Parent=transcript:T2
"""


def ensembl_gtf_lines() -> list[str]:
    """The same gene, transcripts and tags as ENSEMBL_GFF3, written as Ensembl's GTF writes them."""
    tags = {"T1": ' tag "basic"; tag "Ensembl_canonical";', "T2": ' tag "basic"; tag "non_canonical_U12";'}
    exons = {"T1": [(10, 50), (100, 200)], "T2": [(10, 60), (120, 200)]}
    return [
        gtf_exon("chr1", start, end, "+", "G1", transcript, tags[transcript])
        for transcript, spans in exons.items()
        for start, end in spans
    ]


def test_ensembl_style_gff3_keeps_each_isoform(tmp_path):
    """Ensembl/GENCODE transcript lines carry gene_id= as well as transcript_id=: each isoform is
    its own transcript, and GFF3 gives the GTF's sites (the alternative donor and acceptor too)."""
    gff3 = tmp_path / "ensembl.gff3"
    gff3.write_text(ENSEMBL_GFF3)
    gtf = toy_gtf(tmp_path, ensembl_gtf_lines())
    from_gff3 = build_site_tables(read_annotation(gff3), "all").sites
    from_gtf = build_site_tables(read_annotation(gtf), "all").sites
    assert set(read_annotation(gff3).transcripts) == {"T1", "T2"}
    key = ["gene_id", "chrom", "position", "strand", "splice_type", "n_transcripts"]
    assert from_gff3.select(key).sort(key).equals(from_gtf.select(key).sort(key))
    assert sorted(from_gff3["position"]) == [50, 60, 100, 120]


@pytest.mark.parametrize("kind", ["gtf", "gff3"])
def test_canonical_tags_match_whole_words(tmp_path, kind):
    """`non_canonical_U12` contains the word canonical but is not a canonical tag: T1 is chosen."""
    if kind == "gff3":
        path = tmp_path / "ensembl.gff3"
        path.write_text(ENSEMBL_GFF3)
    else:
        path = toy_gtf(tmp_path, ensembl_gtf_lines())
    annotation = read_annotation(path)
    assert {t: r["canonical"] for t, r in annotation.transcripts.items()} == {"T1": True, "T2": False}
    sites = build_site_tables(annotation, "all", "canonical").sites
    assert set(sites["transcript_id"]) == {"T1"}
