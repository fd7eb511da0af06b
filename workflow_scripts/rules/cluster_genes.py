"""The `cluster_genes` rule: exons.parquet + the genome -> gene_clusters.parquet (gene_id, gene_cluster).

Neighbouring genes that share exonic sequence (tandem paralogs, genes overlapping on opposite
strands) form one cluster, which data splits keep in one split (calling/paralogs.py). `--config`
holds the `calling` section; this rule reads CLUSTER_GENES_KEYS of calling/contract.py, so changing
them re-runs neither annotate_sites nor score_base_model.
"""

from __future__ import annotations

import argparse
import sys
import time

import polars as pl

from workflow_scripts.calling.contract import EXON_COLUMNS, GENE_COLUMNS
from workflow_scripts.calling.genome_checks import check_chromosomes
from workflow_scripts.calling.paralogs import gene_clusters
from workflow_scripts.config.sections import add_config_argument
from workflow_scripts.config.types import CallingSection, parse_typed_config
from workflow_scripts.data.fasta import open_genome
from workflow_scripts.data.tables import read_table
from workflow_scripts.errors import run_cli
from workflow_scripts.io_utils import write_parquet


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--exons", required=True, help="exons.parquet (annotate_sites)")
    parser.add_argument("--genes", required=True, help="genes.parquet (annotate_sites)")
    parser.add_argument(
        "--genome", required=True, help="genome index directory (index_genome) or a FASTA file"
    )
    parser.add_argument("--out-gene-clusters", required=True, help="gene clusters parquet")
    add_config_argument(parser, "calling")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    calling: CallingSection = parse_typed_config(args.config, required=("calling",))["calling"]
    settings = calling.paralogs
    began = time.perf_counter()
    genome = open_genome(args.genome)
    exons = read_table(args.exons, required=EXON_COLUMNS).with_columns(pl.col("start", "end").cast(pl.Int64))
    genes = read_table(args.genes, required=GENE_COLUMNS).with_columns(pl.col("start", "end").cast(pl.Int64))
    check_chromosomes(exons, genome, args.exons, "column 'chrom'")
    clusters, summary = gene_clusters(exons, genes, genome, settings)
    write_parquet(clusters, args.out_gene_clusters)
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
