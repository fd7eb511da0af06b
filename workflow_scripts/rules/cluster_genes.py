"""The `cluster_genes` rule: exons.parquet + the genome -> gene_clusters.parquet (gene_id, gene_cluster).

Neighbouring genes that share exonic sequence (tandem paralogs, genes overlapping on opposite
strands) form one cluster, which data splits keep in one split (calling/paralogs.py). `--config`
holds the `calling` section; this rule reads CLUSTER_GENES_KEYS of calling/contract.py, so changing
them re-runs neither annotate_sites nor score_base_model.
"""

from __future__ import annotations

import sys
import time

import polars as pl

from workflow_scripts.calling.contract import EXON_COLUMNS, GENE_COLUMNS
from workflow_scripts.calling.genome_checks import check_chromosomes
from workflow_scripts.calling.paralogs import gene_clusters
from workflow_scripts.config.stages.cluster_genes import STAGE
from workflow_scripts.config.types import CallingSection
from workflow_scripts.data.fasta import open_genome
from workflow_scripts.data.tables import read_table
from workflow_scripts.errors import run_cli
from workflow_scripts.io_utils import write_parquet


def main(argv: list[str] | None = None) -> None:
    paths, cfg = STAGE.parse(argv)
    calling: CallingSection = cfg.calling
    settings = calling.paralogs
    began = time.perf_counter()
    genome = open_genome(paths.genome)
    exons = read_table(paths.exons, required=EXON_COLUMNS).with_columns(pl.col("start", "end").cast(pl.Int64))
    genes = read_table(paths.genes, required=GENE_COLUMNS).with_columns(pl.col("start", "end").cast(pl.Int64))
    check_chromosomes(exons, genome, paths.exons, "column 'chrom'")
    clusters, summary = gene_clusters(exons, genes, genome, settings)
    write_parquet(clusters, paths.out_gene_clusters)
    print(
        f"cluster_genes: {summary['genes_in_paralog_clusters']:,} of {genes.height:,} genes in "
        f"{summary['paralog_clusters']:,} clusters of neighbours sharing exonic sequence (largest "
        f"{summary['largest_paralog_cluster']}; {summary['paralog_links']:,} links at >= {settings.min_shared} "
        f"shared 16-mers within {settings.neighbours} genes); each cluster stays in one split; "
        f"{time.perf_counter() - began:.1f} s",
        file=sys.stderr,
    )


if __name__ == "__main__":
    run_cli(main)
