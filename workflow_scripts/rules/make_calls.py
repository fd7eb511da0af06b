"""The `make_calls` rule: base-model scores + annotated sites -> calls.parquet (TP/FP/FN/TN).

`--config` holds the `calling` section; this rule reads the keys MAKE_CALLS_KEYS of
calling/contract.py (threshold, consensus_window, negatives). `--scores` is the score_base_model
shards' outputs (gathered, read and called one chromosome at a time, so memory follows the
largest chromosome) or the user's own table (gene_id, chrom,
strand, position, donor, acceptor).
docs/calling.md has the rules.
"""

from __future__ import annotations

import sys
import time

import polars as pl

from workflow_scripts.calling.calls import CallSettings, make_calls_by_chromosome
from workflow_scripts.calling.contract import GENE_CLUSTER, GENE_COLUMNS, SITE_COLUMNS
from workflow_scripts.calling.genome_checks import check_chromosomes
from workflow_scripts.calling.scores import ScoreTables
from workflow_scripts.config.stages.make_calls import STAGE
from workflow_scripts.data.fasta import open_genome
from workflow_scripts.data.tables import read_table
from workflow_scripts.errors import InputError, run_cli
from workflow_scripts.io_utils import write_json, write_parquet


def count_line(summary: dict) -> str:
    parts = []
    for splice_type, counts in summary["counts"].items():
        shown = " ".join(f"{name} {counts.get(name, 0):,}" for name in ("TP", "FP", "FN", "TN"))
        ks = summary[f"{splice_type}_report"]["ks_fn_vs_tn_score"]
        parts.append(f"{splice_type}: {shown} (KS FN vs TN score {ks:.3f})")
    return "; ".join(parts)


def with_clusters(genes: pl.DataFrame, path: str) -> pl.DataFrame:
    """The genes with their gene_cluster; every gene must have one."""
    clusters = read_table(path, required=("gene_id", GENE_CLUSTER), columns=("gene_id", GENE_CLUSTER))
    joined = genes.join(clusters, on="gene_id", how="left", maintain_order="left")
    missing = joined.filter(pl.col(GENE_CLUSTER).is_null())
    if missing.height:
        raise InputError(
            path, GENE_CLUSTER, f"gene '{missing['gene_id'][0]}' of the genes table has no cluster"
        )
    return joined


def main(argv: list[str] | None = None) -> None:
    paths, cfg = STAGE.parse(argv)
    settings = CallSettings.from_config(cfg.calling)
    began = time.perf_counter()
    genome = open_genome(paths.genome)
    sites = read_table(paths.sites, required=SITE_COLUMNS).with_columns(pl.col("position").cast(pl.Int64))
    genes = read_table(paths.genes, required=GENE_COLUMNS).with_columns(pl.col("start", "end").cast(pl.Int64))
    check_chromosomes(genes, genome, paths.genes, "column 'chrom'")
    if paths.gene_clusters:
        genes = with_clusters(genes, paths.gene_clusters)
    check_chromosomes(sites, genome, paths.sites, "column 'chrom'")
    tables = ScoreTables(paths.scores, genes, genome.chrom_lengths())
    calls, summary = make_calls_by_chromosome(tables.by_chromosome(), sites, genes, genome, settings)
    summary = {**summary, **tables.report(), "seconds": round(time.perf_counter() - began, 2)}
    write_parquet(calls, paths.out_calls)
    if paths.out_summary:
        write_json(paths.out_summary, summary)
    print(
        f"make_calls: threshold {settings.threshold}, window ±{settings.consensus_window}, "
        f"TN {settings.negatives}; {count_line(summary)}; {summary['seconds']} s",
        file=sys.stderr,
    )


if __name__ == "__main__":
    run_cli(main)
