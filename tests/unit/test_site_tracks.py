"""The calls as BED and GFF3 (sites/outputs.py, sites/gff3.py): annotated sites of both strands,
at a chromosome's first and last base among them, go from a GTF through annotate_sites' reader
into the tracks and back to the GTF's own exon coordinates (the off-by-one trap), and two tools
that know nothing of errorseq read the same bases: GenomeTools (`gt gff3validator` with the
Sequence Ontology, `gt extractfeat`) and bedtools (`getfasta`). Debian: genometools, bedtools
(.ci/run installs them; elsewhere those checks skip and say so)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import polars as pl
import pytest

from workflow_scripts.calling.annotation import build_site_tables
from workflow_scripts.calling.gff import read_annotation
from workflow_scripts.data.fasta import load_fasta
from workflow_scripts.sites.gff3 import SO_TYPES, feature_span, gff3_text, site_position
from workflow_scripts.sites.outputs import bed_text, called

DATA = Path(__file__).parents[1] / "data"
LENGTH = 120  # both chromosomes
# chrA: gene GA (+), exons 1-1, 40-60, 120-120; chrB: gene GB (-), exons in transcript order
# 120-120, 70-90, 1-1. So a + donor at chrA's first base and a + acceptor at its last, a - donor at
# chrB's last base and a - acceptor at its first.
GTF_LINES = [
    ("chrA", 1, 1, "+", "GA"),
    ("chrA", 40, 60, "+", "GA"),
    ("chrA", 120, 120, "+", "GA"),
    ("chrB", 120, 120, "-", "GB"),
    ("chrB", 70, 90, "-", "GB"),
    ("chrB", 1, 1, "-", "GB"),
]
# read off the exon lines above by docs/calling.md's convention: + donor = an exon's end, +
# acceptor = the next exon's start; - donor = an exon's start, - acceptor = the next exon's end
ANNOTATED = {
    ("chrA", 1, "+", "donor"),
    ("chrA", 40, "+", "acceptor"),
    ("chrA", 60, "+", "donor"),
    ("chrA", 120, "+", "acceptor"),
    ("chrB", 120, "-", "donor"),
    ("chrB", 90, "-", "acceptor"),
    ("chrB", 70, "-", "donor"),
    ("chrB", 1, "-", "acceptor"),
}
# SO's splice site is the intron's two bases next to the exon: where each GFF3 feature must lie
SO_SPANS = {
    ("chrA", 2, 3, "+", "five_prime_cis_splice_site"),
    ("chrA", 38, 39, "+", "three_prime_cis_splice_site"),
    ("chrA", 61, 62, "+", "five_prime_cis_splice_site"),
    ("chrA", 118, 119, "+", "three_prime_cis_splice_site"),
    ("chrB", 118, 119, "-", "five_prime_cis_splice_site"),
    ("chrB", 91, 92, "-", "three_prime_cis_splice_site"),
    ("chrB", 68, 69, "-", "five_prime_cis_splice_site"),
    ("chrB", 2, 3, "-", "three_prime_cis_splice_site"),
}
NEW_CALL = ("chrA", 80, "+", "donor")  # a called candidate with no annotated site
COMPLEMENT = str.maketrans("ACGT", "TGCA")
DEBIAN = {"gt": "genometools", "bedtools": "bedtools"}


def tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        if os.environ.get("CI"):
            pytest.fail(f"{name} is missing: .ci/run installs the Debian package {DEBIAN[name]}")
        pytest.skip(f"{name} is not installed (Debian: apt-get install {DEBIAN[name]})")
    return path


def run(*argv: str) -> str:
    done = subprocess.run(argv, capture_output=True, text=True)
    assert done.returncode == 0, f"{argv}: {done.stderr}"
    return done.stdout


def genome_text() -> dict[str, str]:
    """All A, but C at every site's own base and the intron pairs GT/AG on the site's strand
    (AC/CT on the forward strand of chrB): a track one base off reads another base."""
    chromosomes = {"chrA": ["A"] * LENGTH, "chrB": ["A"] * LENGTH}
    for chrom, position, *_ in ANNOTATED:
        chromosomes[chrom][position - 1] = "C"
    for chrom, start, end, strand, so_type in SO_SPANS:
        pair = "GT" if so_type == SO_TYPES["donor"] else "AG"
        forward = pair if strand == "+" else pair.translate(COMPLEMENT)[::-1]
        chromosomes[chrom][start - 1 : end] = list(forward)
    chromosomes["chrA"][NEW_CALL[1] - 1 : NEW_CALL[1] + 2] = list("CGT")
    return {name: "".join(bases) for name, bases in chromosomes.items()}


@pytest.fixture
def inputs(tmp_path: Path) -> tuple[Path, Path]:
    fasta = tmp_path / "genome.fa"
    fasta.write_text("".join(f">{name}\n{bases}\n" for name, bases in genome_text().items()))
    gtf = tmp_path / "genes.gtf"
    gtf.write_text(
        "".join(
            f'{chrom}\ttest\texon\t{start}\t{end}\t.\t{strand}\t.\tgene_id "{gene}"; transcript_id "{gene}.1";\n'
            for chrom, start, end, strand, gene in GTF_LINES
        )
    )
    return fasta, gtf


def calls_of(gtf: Path, fasta: Path) -> pl.DataFrame:
    """The annotation's sites, as annotate_sites reads them, called by the tree with a new call beside."""
    lengths = load_fasta(fasta).chrom_lengths()
    sites = build_site_tables(read_annotation(gtf), "all", chrom_lengths=lengths).sites
    annotated = sites.select("chrom", "position", "strand", "splice_type").with_columns(is_true_site=True)
    new = pl.DataFrame([dict(zip(("chrom", "position", "strand", "splice_type"), NEW_CALL))])
    table = pl.concat([annotated, new.with_columns(is_true_site=False)], how="vertical_relaxed")
    return table.sort("chrom", "position").with_columns(
        call_tree=True, tree_probability=pl.lit(0.9123, dtype=pl.Float32)
    )


def written_tracks(tmp_path: Path, table: pl.DataFrame, lengths: dict[str, int]) -> tuple[Path, Path]:
    bed, gff3 = tmp_path / "calls.bed", tmp_path / "calls.gff3"
    bed.write_text(bed_text(table, "tree", "tree_probability", "the tree's calls"))
    text, outside = gff3_text(called(table, "tree", "tree_probability"), "tree", lengths)
    assert outside == 0
    gff3.write_text(text)
    return bed, gff3


def bed_rows(path: Path) -> list[list[str]]:
    return [line.split("\t") for line in path.read_text().splitlines() if not line.startswith("track")]


def gff3_rows(path: Path) -> list[list[str]]:
    return [line.split("\t") for line in path.read_text().splitlines() if not line.startswith("#")]


def attributes(column9: str) -> dict[str, str]:
    return dict(pair.split("=", 1) for pair in column9.split(";"))


def test_annotated_sites_round_trip_through_bed_and_gff3(tmp_path, inputs):
    fasta, gtf = inputs
    table = calls_of(gtf, fasta)
    assert (
        set(table.filter("is_true_site").select("chrom", "position", "strand", "splice_type").iter_rows())
        == ANNOTATED
    )
    bed, gff3 = written_tracks(tmp_path, table, load_fasta(fasta).chrom_lengths())

    from_bed = set()
    for chrom, start, end, name, score, strand in bed_rows(bed):
        assert int(end) - int(start) == 1 and score == "912"
        splice_type, where = name.split(":")
        from_bed.add((chrom, int(start) + 1, strand, splice_type, where))
    assert from_bed == {(*site, "annotated") for site in ANNOTATED} | {(*NEW_CALL, "new")}

    lines = gff3_rows(gff3)
    spans = {(c, int(s), int(e), strand, so) for c, _, so, s, e, _, strand, _, _ in lines}
    assert spans - {(NEW_CALL[0], 81, 82, "+", SO_TYPES["donor"])} == SO_SPANS
    from_gff3 = set()
    for chrom, source, so_type, start, _, score, strand, phase, column9 in lines:
        fields = attributes(column9)
        splice_type = fields["Name"]
        assert so_type == SO_TYPES[splice_type] and (source, score, phase) == ("errorseq", "0.9123", ".")
        position = int(fields["position"])
        assert site_position(int(start), splice_type, strand) == position
        assert fields["ID"] == f"{chrom}:{position}:{strand}:{splice_type}"
        assert fields["predictor"] == "tree" and fields["probability"] == "0.9123"
        from_gff3.add((chrom, position, strand, splice_type, fields["annotated"]))
    assert from_gff3 == {(*site, "yes") for site in ANNOTATED} | {(*NEW_CALL, "no")}
    assert gff3.read_text().splitlines()[:3] == [
        "##gff-version 3",
        f"##sequence-region chrA 1 {LENGTH}",
        f"##sequence-region chrB 1 {LENGTH}",
    ]


def test_genometools_validates_the_gff3_and_reads_gt_and_ag(tmp_path, inputs):
    gt = tool("gt")
    fasta, gtf = inputs
    _, gff3 = written_tracks(tmp_path, calls_of(gtf, fasta), load_fasta(fasta).chrom_lengths())
    run(gt, "gff3validator", "-typecheck", "so", str(gff3))
    for splice_type, pair in (("donor", "GT"), ("acceptor", "AG")):
        extracted = run(
            gt,
            "extractfeat",
            "-matchdescstart",
            "-type",
            SO_TYPES[splice_type],
            "-seqfile",
            str(fasta),
            str(gff3),
        )
        sequences = [line for line in extracted.splitlines() if not line.startswith(">")]
        assert sequences and set(sequences) <= {pair}, (splice_type, sequences)
    # the validator does check: a feature one base past its sequence-region is refused
    broken = tmp_path / "broken.gff3"
    broken.write_text(gff3.read_text().replace("\t118\t119\t", f"\t{LENGTH}\t{LENGTH + 1}\t", 1))
    refused = subprocess.run([gt, "gff3validator", "-typecheck", "so", str(broken)], capture_output=True)
    assert refused.returncode != 0


def test_bedtools_reads_each_site_base_and_intron_pair(tmp_path, inputs):
    bedtools = tool("bedtools")
    fasta, gtf = inputs
    bed, gff3 = written_tracks(tmp_path, calls_of(gtf, fasta), load_fasta(fasta).chrom_lengths())
    site_bases = run(bedtools, "getfasta", "-s", "-tab", "-fi", str(fasta), "-bed", str(bed)).split()
    # every BED line is the site's own base: C on the forward strand, G read on the minus strand
    strands = [row[5] for row in bed_rows(bed)]
    assert site_bases[1::2] == ["C" if strand == "+" else "G" for strand in strands]
    pairs = run(bedtools, "getfasta", "-s", "-tab", "-fi", str(fasta), "-bed", str(gff3)).split()
    types = [row[2] for row in gff3_rows(gff3)]
    assert pairs[1::2] == ["GT" if t == SO_TYPES["donor"] else "AG" for t in types]


def test_real_arabidopsis_sites_read_gt_and_ag_in_genometools(tmp_path):
    """31 sites of three TAIR10 genes (both strands): GenomeTools reads GT at every donor
    feature and AG at every acceptor feature of the GFF3."""
    gt = tool("gt")
    fasta = DATA / "athaliana_chr1_1-14000.fa"
    lengths = load_fasta(fasta).chrom_lengths()
    sites = build_site_tables(
        read_annotation(DATA / "athaliana_chr1_1-14000.gtf.gz"), ["protein_coding"]
    ).sites
    calls = sites.select("chrom", "position", "strand", "splice_type").with_columns(probability=1.0)
    text, outside = gff3_text(calls, "annotation", lengths, annotated=None)
    assert outside == 0 and "annotated=" not in text
    gff3 = tmp_path / "sites.gff3"
    gff3.write_text(text)
    run(gt, "gff3validator", "-typecheck", "so", str(gff3))
    genome = tmp_path / "genome.fa"  # gt indexes the FASTA beside it
    genome.write_bytes(fasta.read_bytes())
    for splice_type, pair in (("donor", "GT"), ("acceptor", "AG")):
        extracted = run(
            gt,
            "extractfeat",
            "-matchdescstart",
            "-type",
            SO_TYPES[splice_type],
            "-seqfile",
            str(genome),
            str(gff3),
        )
        sequences = [line for line in extracted.splitlines() if not line.startswith(">")]
        expected = (sites["splice_type"] == splice_type).sum()
        assert len(sequences) == expected and set(sequences) == {pair}


@pytest.mark.parametrize(
    ("splice_type", "strand", "span"),
    [
        ("donor", "+", (11, 12)),
        ("acceptor", "+", (8, 9)),
        ("donor", "-", (8, 9)),
        ("acceptor", "-", (11, 12)),
    ],
)
def test_feature_span_is_the_intron_pair_and_comes_back(splice_type, strand, span):
    assert feature_span(10, splice_type, strand) == span
    assert site_position(span[0], splice_type, strand) == 10


def test_a_call_with_no_room_for_an_intron_is_counted_not_written():
    calls = pl.DataFrame(
        {
            "chrom": ["c", "c", "c"],
            "position": [1, 5, 10],
            "strand": ["-", "+", "+"],
            "splice_type": ["donor", "donor", "donor"],
            "probability": [0.7, 0.8, 0.9],
        }
    )
    text, outside = gff3_text(calls, "tree", {"c": 10}, annotated=None)
    features = [line for line in text.splitlines() if not line.startswith("#")]
    assert outside == 2 and len(features) == 1 and "\t6\t7\t" in features[0]
    assert text.splitlines()[-1].startswith("# 2 calls at a chromosome end")


def test_names_with_reserved_characters_are_escaped():
    calls = pl.DataFrame(
        {
            "chrom": ["scaffold 1;x=y"],
            "position": [5],
            "strand": ["+"],
            "splice_type": ["acceptor"],
            "probability": [0.5],
        }
    )
    text, _ = gff3_text(calls, "tree", {"scaffold 1;x=y": 20}, annotated=None)
    feature = text.splitlines()[-1].split("\t")
    assert feature[0] == "scaffold%201%3Bx%3Dy"
    assert "##sequence-region scaffold%201%3Bx%3Dy 1 20" in text
    assert attributes(feature[8])["ID"] == "scaffold 1%3Bx%3Dy:5:+:acceptor"


def test_bed_without_an_annotation_names_the_splice_type():
    table = pl.DataFrame(
        {
            "chrom": ["c"],
            "position": [5],
            "strand": ["-"],
            "splice_type": ["donor"],
            "call_tree": [True],
            "tree_probability": [0.25],
        }
    )
    line = bed_text(table, "tree", "tree_probability", "d").splitlines()[1]
    assert line == "c\t4\t5\tdonor\t250\t-"
