"""rescore_sites' memory grows with the nt it scores (workflow/resources.py, issue 49): from the
BED of calling.regions, else the genome index, else the FASTA's size; more on a retry."""

from __future__ import annotations

import gzip

from workflow_scripts.workflow.resources import MB_BASE, ScoredNt, rescore_mem_mb, scored_nt


def test_the_scored_nt_come_from_the_bed_then_the_index_then_the_fasta(tmp_path):
    bed = tmp_path / "regions.bed"
    bed.write_text("track name=x\n# a comment\nchr1\t100\t1100\tone\nchr2 0 500\nchr1\t2000\t2200\n")
    index = tmp_path / "index.tsv"
    index.write_text("name\tlength\toffset\nchr1\t3000\t0\nchr2\t2000\t3000\n")
    fasta = tmp_path / "genome.fa"
    fasta.write_text(">chr1\n" + "ACGT" * 250 + "\n")
    assert scored_nt(str(bed), str(index), str(fasta)) == ScoredNt(2 * 1700, 2 * 1200)  # both strands
    assert scored_nt(None, str(index), str(fasta)) == ScoredNt(2 * 5000, 2 * 3000)
    size = fasta.stat().st_size
    assert scored_nt(None, str(tmp_path / "no_index.tsv"), str(fasta)) == ScoredNt(2 * size, 2 * size)
    packed = tmp_path / "genome.fa.gz"
    packed.write_bytes(gzip.compress(fasta.read_bytes()))
    assert scored_nt(None, "", str(packed)).total > 2 * packed.stat().st_size  # inflated, not the gz size
    assert scored_nt(None, "", str(tmp_path / "missing.fa")) is None


def test_memory_grows_with_the_nt_the_largest_chromosome_and_the_attempt():
    region = rescore_mem_mb(ScoredNt(600_000, 600_000))  # the README's 300 kb, both strands
    chromosome = rescore_mem_mb(ScoredNt(60_000_000, 60_000_000))
    genome = rescore_mem_mb(ScoredNt(300_000_000, 60_000_000))  # 150 Mb in 30-Mb chromosomes
    assert region == 2000 < chromosome < genome
    assert 15_000 <= genome <= 17_000  # the figure docs/calling.md gives
    one_long = rescore_mem_mb(ScoredNt(300_000_000, 300_000_000))  # the same nt in one chromosome
    assert one_long > genome
    assert rescore_mem_mb(None) == MB_BASE
    assert rescore_mem_mb(ScoredNt(60_000_000, 60_000_000), attempt=2) >= 2 * chromosome - 1000
    assert all(mb % 1000 == 0 for mb in (region, chromosome, genome, one_long))
