"""Whole-region site metrics: every call in the scored regions counts, wherever it lies.

site_calls' in-gene figures (site_metrics.json `calls`, `differences`) count the scored annotated
sites and the false candidates inside an annotated gene on their strand, as make_calls counts on
genes. The whole-region figures (`whole_region`) count every item: a called candidate with no
annotated site of its type and strand within ±calling.consensus_window nt is an FP wherever it
lies, counted by its location:

    gene        inside an annotated gene on its strand
    antisense   outside those, inside an annotated gene on the other strand
    intergenic  neither

They mean what a user of the calls gets only where the scored spans are whole regions (calling.regions
with calling.start annotation: `scored` says "regions"); where only the genes' spans were
scored, no candidate lies outside a gene and both figures are the same items (and the same
gene-cluster intervals). On a scan their intervals resample genomic blocks of BLOCK_NT nt (both
strands of a block together: an intergenic call belongs to no gene cluster), paired as the
gene-cluster bootstrap is. Where the annotation misses
genes, their real sites count as FP here: whole-region precision is a lower bound (docs/sites.md).
A candidate outside every gene on its strand takes its block as its out-of-fold unit too
(sites/folds.py).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import polars as pl

from workflow_scripts.calling.calls import containing_genes
from workflow_scripts.sites.candidates import NO_GENE
from workflow_scripts.sites.items import BLOCK_NT, Items
from workflow_scripts.sites.predictors import BASE_THRESHOLD, OVER_THE_BASE

GENE, ANTISENSE, INTERGENIC = "gene", "antisense", "intergenic"
LOCATIONS = (GENE, ANTISENSE, INTERGENIC)
SCORED_REGIONS, SCORED_GENES = "regions", "gene spans"
MIN_BLOCKS = 2  # fewer: a block bootstrap draws the same items every time, no interval

__all__ = [
    "NO_GENE",
    "BLOCK_NT",
    "BLOCK_UNIT",
    "LOCATIONS",
    "block_label",
    "with_locations",
    "whole_region_report",
]


BLOCK_UNIT = "(block) "  # the gene_cluster of a candidate outside genes: its block


def block_label() -> pl.Expr:
    """A row's genomic block (chrom and position): the folds' unit outside genes."""
    return pl.format(BLOCK_UNIT + "{}:{}", pl.col("chrom"), pl.col("position") // BLOCK_NT)


def with_locations(table: pl.DataFrame, genes: pl.DataFrame) -> pl.DataFrame:
    """The candidates with `location`: gene, antisense or intergenic (module docstring)."""
    rows = table.with_row_index("row")
    outside = rows.filter(pl.col("gene_id") == NO_GENE).select(
        "row",
        "chrom",
        pl.when(pl.col("strand") == "+").then(pl.lit("-")).otherwise(pl.lit("+")).alias("strand"),
        "position",
        pl.lit(None, dtype=pl.String).alias("gene_id"),
    )
    antisense = containing_genes(outside, genes).filter(pl.col("gene_id").is_not_null())["row"]
    location = (
        pl.when(pl.col("gene_id") != NO_GENE)
        .then(pl.lit(GENE))
        .when(pl.col("row").is_in(antisense.implode()))
        .then(pl.lit(ANTISENSE))
        .otherwise(pl.lit(INTERGENIC))
    )
    return rows.with_columns(location.alias("location")).drop("row")


def by_blocks(items: Items) -> Items:
    """The items with their genomic block as the bootstrap's resampled unit."""
    return items if items.block is None else replace(items, cluster=items.block)


def false_positives_by_location(items: Items, calls: dict[str, np.ndarray]) -> dict:
    """{predictor: {gene, antisense, intergenic: FP}}."""
    report = {}
    for name, candidate_calls in calls.items():
        false = items.called(candidate_calls) & ~items.is_site
        report[name] = {where: int((false & (items.location == where)).sum()) for where in LOCATIONS}
    return report


def whole_region_report(
    items: Items, calls: dict[str, np.ndarray], replicates: int, seed: int, scored: str
) -> dict:
    """site_metrics.json's `whole_region`: every item's calls, FP by location, and the paired
    differences with block-bootstrap intervals: site_calls' pairs and each re-scorer against
    base_threshold (the base model's own calls, what the issue's user compares with)."""
    from workflow_scripts.sites.intervals import difference_intervals, pair_differences
    from workflow_scripts.sites.site_metrics import predictor_calls

    blocks = int(len(np.unique(items.block))) if items.block is not None else 0
    scan = scored == SCORED_REGIONS
    # a scan's items outside genes belong to no gene cluster: blocks; the genes' spans alone: clusters
    resampled = by_blocks(items) if scan else items
    drawn = replicates if blocks >= MIN_BLOCKS or not scan else 0
    differences = difference_intervals(resampled, calls, drawn, seed)
    against_base = tuple((name, BASE_THRESHOLD) for name in OVER_THE_BASE if name in calls)
    differences |= pair_differences(resampled, calls, against_base, drawn, seed)
    if drawn < replicates:
        differences = without_intervals(differences, f"{blocks} genomic block: no block-bootstrap interval")
    return {
        "scored": scored,
        "calls": {name: predictor_calls(items, called) for name, called in calls.items()},
        "false_positives_by_location": false_positives_by_location(items, calls),
        "differences": differences,
        "bootstrap": {
            "replicates": drawn,
            "seed": seed,
            "resampled_unit": f"{BLOCK_NT // 1000}-kb genomic block" if scan else "gene_cluster",
            "blocks": blocks,
        },
    }


def without_intervals(differences: dict, reason: str) -> dict:
    """Every difference's interval null, with `reason` (its estimate kept, verdict not better)."""
    return {
        pair: {
            group: {
                metric: {**difference, "reason": reason} if difference["low"] is None else difference
                for metric, difference in metrics.items()
            }
            for group, metrics in groups.items()
        }
        for pair, groups in differences.items()
    }
