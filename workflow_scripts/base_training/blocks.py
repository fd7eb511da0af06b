"""Blocks: the genes of one chromosome and strand whose spans overlap or lie within `merge_gap` nt
of each other, merged into one labelled span; a span longer than `max_core` nt is cut into
consecutive cores of about equal length (at most `max_core` each). Every core later carries
`half_context` nt of flanking DNA on each side (arrays.py).

Coordinates here are 0-based half-open (`core_start`, `core_end`); genes.parquet's are 1-based
inclusive (calling/contract.py).
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl

GENE_KEYS = ("gene_id", "chrom", "start", "end", "strand")


def merged_spans(genes: pl.DataFrame, merge_gap: int) -> pl.DataFrame:
    """One row per merged span: span (int, 0..), chrom, strand, start, end (0-based half-open),
    genes (list of gene_id, in genome order). Spans are numbered in (chrom as in `genes`, strand,
    start) order."""
    frame = genes.select(GENE_KEYS).with_columns(
        (pl.col("start").cast(pl.Int64) - 1).alias("start"), pl.col("end").cast(pl.Int64)
    )
    chrom_order = {name: i for i, name in enumerate(frame["chrom"].unique(maintain_order=True).to_list())}
    frame = frame.with_columns(
        pl.col("chrom").replace_strict(chrom_order, return_dtype=pl.Int64).alias("chrom_rank")
    ).sort("chrom_rank", "strand", "start", "end", "gene_id")
    # a new span starts where the gene begins past every earlier gene's end (+ merge_gap) on its chrom/strand
    reach = pl.col("end").cum_max().shift(1).over("chrom_rank", "strand")
    frame = frame.with_columns(
        (reach.is_null() | (pl.col("start") > reach + merge_gap)).cum_sum().alias("span")
    )
    spans = (
        frame.group_by("span", maintain_order=True)
        .agg(
            pl.col("chrom").first(),
            pl.col("strand").first(),
            pl.col("start").min(),
            pl.col("end").max(),
            pl.col("gene_id").alias("genes"),
        )
        .with_columns((pl.col("span") - 1).cast(pl.Int64))
    )
    return spans


def core_cuts(start: int, end: int, max_core: int) -> list[tuple[int, int]]:
    """[start, end) cut into ceil(length / max_core) consecutive pieces of about equal length."""
    pieces = max(1, math.ceil((end - start) / max_core))
    edges = np.linspace(start, end, pieces + 1).round().astype(np.int64)
    return list(zip(edges[:-1].tolist(), edges[1:].tolist()))


def cut_cores(spans: pl.DataFrame, max_core: int) -> pl.DataFrame:
    """One row per core: span, chrom, strand, core_start, core_end, genes (the genes of the span
    that overlap the core)."""
    rows = []
    for span in spans.iter_rows(named=True):
        for core_start, core_end in core_cuts(span["start"], span["end"], max_core):
            rows.append((span["span"], span["chrom"], span["strand"], core_start, core_end, span["genes"]))
    cores = pl.DataFrame(
        rows,
        schema={
            "span": pl.Int64,
            "chrom": pl.String,
            "strand": pl.String,
            "core_start": pl.Int64,
            "core_end": pl.Int64,
            "genes": pl.List(pl.String),
        },
        orient="row",
    )
    return cores


def genes_in_cores(cores: pl.DataFrame, genes: pl.DataFrame) -> pl.DataFrame:
    """`cores` with `genes` narrowed to the genes overlapping each core (a long span cut in pieces)."""
    spans = genes.select(
        "gene_id", (pl.col("start").cast(pl.Int64) - 1).alias("g_start"), pl.col("end").alias("g_end")
    )
    exploded = (
        cores.with_row_index("core")
        .explode("genes")
        .join(spans, left_on="genes", right_on="gene_id", how="left", maintain_order="left")
        .filter((pl.col("g_start") < pl.col("core_end")) & (pl.col("g_end") > pl.col("core_start")))
        .group_by("core", maintain_order=True)
        .agg(pl.col("genes"))
    )
    return (
        cores.with_row_index("core")
        .drop("genes")
        .join(exploded, on="core", how="left", maintain_order="left")
        .drop("core")
    )


def plan_cores(genes: pl.DataFrame, merge_gap: int, max_core: int) -> pl.DataFrame:
    """The genes (genes.parquet) as cores: span, chrom, strand, core_start, core_end, genes."""
    return genes_in_cores(cut_cores(merged_spans(genes, merge_gap), max_core), genes)
