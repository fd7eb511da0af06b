"""rescore_sites' memory grows with the nt it scores (workflow/resources.py, issue 49): from the
BED of calling.regions, else the genome index, else the FASTA's size; more on a retry."""

from __future__ import annotations

import gzip

from workflow_scripts.workflow.resources import MB_BASE, MB_PER_MILLION_NT, rescore_mem_mb, scored_nt


def test_the_scored_nt_come_from_the_bed_then_the_index_then_the_fasta(tmp_path):
    bed = tmp_path / "regions.bed"
    bed.write_text("track name=x\n# a comment\nchr1\t100\t1100\tone\nchr2 0 500\n")
    index = tmp_path / "index.tsv"
    index.write_text("name\tlength\toffset\nchr1\t3000\t0\nchr2\t2000\t3000\n")
    fasta = tmp_path / "genome.fa"
    fasta.write_text(">chr1\n" + "ACGT" * 250 + "\n")
    assert scored_nt(str(bed), str(index), str(fasta)) == 2 * 1500  # both strands
    assert scored_nt(None, str(index), str(fasta)) == 2 * 5000
    assert scored_nt(None, str(tmp_path / "no_index.tsv"), str(fasta)) == 2 * fasta.stat().st_size
    packed = tmp_path / "genome.fa.gz"
    packed.write_bytes(gzip.compress(fasta.read_bytes()))
    assert scored_nt(None, "", str(packed)) > 2 * packed.stat().st_size  # inflated, not the gz size
    assert scored_nt(None, "", str(tmp_path / "missing.fa")) is None


def test_memory_grows_with_the_nt_and_the_attempt():
    small, region, genome = rescore_mem_mb(600_000), rescore_mem_mb(40_000_000), rescore_mem_mb(300_000_000)
    assert small < region < genome and genome >= MB_BASE + MB_PER_MILLION_NT * 300
    assert 15_000 <= genome <= 17_000  # a 150-Mb genome, both strands: the figure docs/calling.md gives
    assert rescore_mem_mb(None) == rescore_mem_mb(0) == MB_BASE
    assert rescore_mem_mb(20_000_000, attempt=2) >= 2 * rescore_mem_mb(20_000_000) - 1000
    assert all(mb % 1000 == 0 for mb in (small, region, genome))
