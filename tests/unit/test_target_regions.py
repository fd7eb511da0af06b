"""calling.start regions' spans (calling/target_regions.py, the target_regions rule): a BED or the
whole genome becomes a genes.parquet-shaped table that score_base_model plans and shards as it
does genes; bad BED lines are one error each."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from workflow_scripts.calling.contract import GENE_COLUMNS
from workflow_scripts.calling.regions import MAX_REGION, plan_regions, read_genes
from workflow_scripts.calling.shards import plan_shards, shard_nt
from workflow_scripts.calling.target_regions import region_table, target_regions
from workflow_scripts.data.genome import Genome
from workflow_scripts.errors import run_cli
from workflow_scripts.rules import target_regions as rule

FASTA = Path(__file__).parents[1] / "data" / "athaliana_chr1_1-14000.fa"


def genome_of(**lengths: int) -> Genome:
    sizes = np.array(list(lengths.values()), dtype=np.int64)
    return Genome(list(lengths), sizes, np.zeros(int(sizes.sum()), dtype=np.uint8))


def spans(table: pl.DataFrame) -> list[tuple]:
    return list(table.select("chrom", "start", "end", "strand").iter_rows())


def run_rule(tmp_path: Path, bed: str | None, genome: Path = FASTA) -> pl.DataFrame:
    out = tmp_path / "regions.parquet"
    argv = ["--genome", str(genome), "--out-regions", str(out)]
    if bed is not None:
        (tmp_path / "regions.bed").write_text(bed)
        argv += ["--regions", str(tmp_path / "regions.bed")]
    run_cli(rule.main, argv)
    return pl.read_parquet(out)


def test_no_bed_scores_every_chromosome_on_both_strands(tmp_path):
    table = run_rule(tmp_path, None)
    assert table.columns == list(GENE_COLUMNS)
    assert spans(table) == [("NC_003070.9", 1, 14000, "+"), ("NC_003070.9", 1, 14000, "-")]
    assert table["gene_id"].to_list() == ["NC_003070.9:1-14000:+", "NC_003070.9:1-14000:-"]
    assert set(table["biotype"]) == {"region"}


def test_bed_intervals_become_1_based_spans_merged_per_strand(tmp_path):
    bed = (
        "track name=x\n# a comment\nbrowser position chr1\n"
        "NC_003070.9\t0\t100\tfirst\t0\t+\n"  # 1-100 on +
        "NC_003070.9\t100\t200\tsecond\t0\t+\n"  # touches it: 1-200 on +
        "NC_003070.9\t150\t300\tthird\t0\t.\n"  # both strands: + merges into 1-300
        "NC_003070.9\t13900\t14000\n"  # no strand column: both, up to the last base
    )
    table = run_rule(tmp_path, bed)
    assert spans(table) == [
        ("NC_003070.9", 1, 300, "+"),
        ("NC_003070.9", 13901, 14000, "+"),
        ("NC_003070.9", 151, 300, "-"),
        ("NC_003070.9", 13901, 14000, "-"),
    ]


def test_gzip_bed_reads_the_same(tmp_path):
    bed = tmp_path / "r.bed.gz"
    bed.write_bytes(gzip.compress(b"NC_003070.9\t10\t20\t.\t0\t-\n"))
    out = tmp_path / "gz.parquet"
    run_cli(rule.main, ["--genome", str(FASTA), "--regions", str(bed), "--out-regions", str(out)])
    assert spans(pl.read_parquet(out)) == [("NC_003070.9", 11, 20, "-")]


def test_a_long_chromosome_is_cut_into_tiles_that_scoring_plans_and_shards():
    genome = genome_of(chrL=5_000_000, chrS=700)
    table = region_table(
        [("chrL", 0, 5_000_000, "+"), ("chrL", 0, 5_000_000, "-"), ("chrS", 0, 700, "+")], genome
    )
    assert spans(table.filter(pl.col("strand") == "+", pl.col("chrom") == "chrL")) == [
        ("chrL", 1, 2_000_000, "+"),
        ("chrL", 2_000_001, 4_000_000, "+"),
        ("chrL", 4_000_001, 5_000_000, "+"),
    ]
    regions = plan_regions(read_genes_of(table, genome), genome, merge_gap=10_000)
    assert len(regions) == 7 and max(r.end - r.start for r in regions) == MAX_REGION
    covered = {(r.chrom, r.minus): 0 for r in regions}
    for region in regions:
        covered[(region.chrom, region.minus)] += region.end - region.start
    assert covered == {(0, False): 5_000_000, (0, True): 5_000_000, (1, False): 700}
    shards = plan_shards(regions, 4)
    assert sorted(shard_nt(shard) for shard in shards) == [2_000_000, 2_000_700, 3_000_000, 3_000_000]


def read_genes_of(table: pl.DataFrame, genome: Genome) -> pl.DataFrame:
    """score_base_model's own reader and checks, on the table as the rule writes it."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "regions.parquet"
        table.write_parquet(path)
        return read_genes(path, genome)


def test_whole_genome_without_bed_covers_every_chromosome():
    genome = genome_of(a=10, b=3_000_000)
    table = target_regions(None, genome)
    assert spans(table) == [
        ("a", 1, 10, "+"),
        ("a", 1, 10, "-"),
        ("b", 1, 2_000_000, "+"),
        ("b", 2_000_001, 3_000_000, "+"),
        ("b", 1, 2_000_000, "-"),
        ("b", 2_000_001, 3_000_000, "-"),
    ]


@pytest.mark.parametrize(
    ("line", "field", "message"),
    [
        ("chr1\t0\t10\n", "line 1 chrom", "'chr1' not in genome"),
        ("NC_003070.9\t0\t14001\n", "line 1 end", "14001 is past the end of 'NC_003070.9' (14,000 nt)"),
        ("NC_003070.9\t20\t10\n", "line 1", "start 20, end 10: want 0 <= start < end (0-based)"),
        ("NC_003070.9\t-1\t10\n", "line 1", "start -1, end 10"),
        ("NC_003070.9\t1.5\t10\n", "line 1 start", "'1.5' is not a whole number"),
        ("NC_003070.9\t0\t10\tn\t0\t*\n", "line 1 strand", "'*': want +, - or ."),
        ("NC_003070.9\t0\n", "line 1", "expected chrom, start and end, found 2 column"),
        ("track only\n", "calling.regions", "no intervals: nothing to score"),
    ],
)
def test_bad_bed_lines_are_one_error_naming_file_and_field(tmp_path, capsys, line, field, message):
    with pytest.raises(SystemExit) as exit_info:
        run_rule(tmp_path, line)
    assert exit_info.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"errorseq: error: {tmp_path / 'regions.bed'}: {field}: ")
    assert message in lines[0]
    assert not (tmp_path / "regions.parquet").exists()
