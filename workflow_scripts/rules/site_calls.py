"""The `site_calls` rule: base-model scores + annotated sites -> site-level re-scored calls.

Candidates (the base model's local score maxima at or above sites.floor) are called out of fold
over gene clusters by three predictors: the base model at calling.threshold, the base model with
a threshold per splice type tuned on the training folds, and a gradient-boosted tree on the donor
and acceptor score profiles. Writes the corrected-calls table, BED tracks of the tree's and the
base model's calls, and site_metrics.json (metrics per predictor and splice type, bootstrap
intervals of the differences, the answer in a sentence). `--config` holds the `calling` section
(threshold, consensus_window: calling/contract.SITE_CALLS_KEYS) and the `sites` section.
docs/sites.md.
"""

from __future__ import annotations

import argparse
import sys
import time

import polars as pl

from workflow_scripts.calling.contract import GENE_CLUSTER, GENE_COLUMNS, SITE_COLUMNS
from workflow_scripts.calling.genome_checks import check_chromosomes
from workflow_scripts.calling.scores import ScoreTables
from workflow_scripts.config.sections import add_config_argument, parse_rule_config
from workflow_scripts.data.fasta import open_genome
from workflow_scripts.data.tables import read_table
from workflow_scripts.errors import run_cli
from workflow_scripts.io_utils import write_json, write_parquet, write_text
from workflow_scripts.sites.candidates import find_candidates
from workflow_scripts.sites.folds import assign_folds
from workflow_scripts.sites.items import Items
from workflow_scripts.sites.outputs import bed_text, corrected_calls
from workflow_scripts.sites.predictors import BASE_THRESHOLD, TREE, predict_out_of_fold
from workflow_scripts.sites.report import site_report
from workflow_scripts.sites.settings import SiteSettings


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scores", required=True, nargs="+", help="scores tables: one, or every shard's")
    parser.add_argument("--sites", required=True, help="sites.parquet (annotate_sites)")
    parser.add_argument("--genes", required=True, help="genes.parquet (annotate_sites)")
    parser.add_argument("--gene-clusters", required=True, help="gene_clusters.parquet (cluster_genes)")
    parser.add_argument(
        "--genome", required=True, help="genome index directory (index_genome) or a FASTA file"
    )
    parser.add_argument("--out-calls", required=True, help="corrected calls (parquet)")
    parser.add_argument("--out-tree-bed", required=True, help="BED of the tree's calls")
    parser.add_argument(
        "--out-base-bed", required=True, help="BED of the base model's calls at calling.threshold"
    )
    parser.add_argument("--out-metrics", required=True, help="site_metrics.json")
    add_config_argument(parser, "calling", "sites")
    return parser.parse_args(argv)


def log(line: str) -> None:
    print(f"site_calls: {line}", file=sys.stderr, flush=True)


def read_inputs(args: argparse.Namespace):
    genome = open_genome(args.genome)
    sites = read_table(args.sites, required=SITE_COLUMNS).with_columns(pl.col("position").cast(pl.Int64))
    genes = read_table(args.genes, required=GENE_COLUMNS).with_columns(pl.col("start", "end").cast(pl.Int64))
    check_chromosomes(genes, genome, args.genes, "column 'chrom'")
    check_chromosomes(sites, genome, args.sites, "column 'chrom'")
    clusters = read_table(
        args.gene_clusters, required=("gene_id", GENE_CLUSTER), columns=("gene_id", GENE_CLUSTER)
    )
    return genome, sites, genes, clusters


def write_outputs(args: argparse.Namespace, table: pl.DataFrame, report: dict, threshold: float) -> None:
    write_parquet(table, args.out_calls)
    tree_track = "errorseq gradient-boosted tree on the base model's score profiles, out of fold"
    write_text(args.out_tree_bed, bed_text(table, TREE, "tree_probability", tree_track))
    base_track = f"the base model's calls at {threshold} (local maxima)"
    write_text(args.out_base_bed, bed_text(table, BASE_THRESHOLD, "base_score", base_track))
    write_json(args.out_metrics, report)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    config = parse_rule_config(args.config, required=("calling", "sites"))
    settings = SiteSettings.from_config(config["calling"], config["sites"])
    began = time.perf_counter()
    genome, sites, genes, clusters = read_inputs(args)
    tables = ScoreTables(args.scores, genes, genome.chrom_lengths())
    found = find_candidates(tables.by_chromosome(), sites, genes, settings, progress=log)
    tables.report()
    found = assign_folds(found, clusters, settings.folds, settings.seed)
    items = Items.from_candidates(found)
    log(
        f"{found.table.height:,} candidates, {found.sites.height:,} scored sites ({int(found.missed.sum()):,} missed)"
    )
    predictions = predict_out_of_fold(found, items, settings, progress=log)
    report = site_report(found, items, predictions, settings, sites.height - found.sites.height)
    write_outputs(args, corrected_calls(found, predictions), report, settings.threshold)
    print(f"{report['answer']}; {time.perf_counter() - began:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    run_cli(main)
