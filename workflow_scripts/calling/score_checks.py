"""What a scores table must hold (calling/scores.py reads it): typed columns, both strands of every
selected gene scored, positions within their chromosome and at least MIN_SCORED_SHARE of the
genes' positions. Each refusal is one InputError naming the file, the column and the first bad row.
"""

from __future__ import annotations

import polars as pl

from workflow_scripts.data.tables import ROW, fail_on_first
from workflow_scripts.errors import InputError

SPLICE_TYPES = ("donor", "acceptor")
STRANDS = ("+", "-")


def as_number(frame: pl.DataFrame, column: str, dtype) -> pl.Expr:
    """A text or numeric column cast to `dtype`; what does not parse becomes null."""
    value = pl.col(column)
    if frame.schema[column] == pl.String:
        value = value.str.strip_chars()
    return value.cast(dtype, strict=False)


def typed_scores(frame: pl.DataFrame, path) -> pl.DataFrame:
    """Cast and check the columns (rows numbered: ROW), naming the first bad row."""
    parsed = frame.with_columns(
        pl.col("chrom").cast(pl.String).str.strip_chars(),
        pl.col("strand").cast(pl.String).str.strip_chars(),
        as_number(frame, "position", pl.Int64).alias("position_int"),
        as_number(frame, "position", pl.Float64).alias("position_float"),
        *(as_number(frame, c, pl.Float64).alias(f"{c}_float") for c in SPLICE_TYPES),
    )
    fail_on_first(
        parsed,
        pl.col("position_int").is_null()
        | (pl.col("position_int") < 1)
        | (pl.col("position_int") != pl.col("position_float")),  # 12.7 stored as a float: not 12
        path,
        "position",
        "not a positive integer",
    )
    fail_on_first(
        parsed,
        ~pl.col("strand").is_in(STRANDS) | pl.col("strand").is_null(),
        path,
        "strand",
        "strand must be '+' or '-'",
    )
    for column in SPLICE_TYPES:
        value = pl.col(f"{column}_float")
        fail_on_first(
            parsed,
            value.is_null() | value.is_nan() | (value < 0) | (value > 1),
            path,
            column,
            "not a probability in [0, 1]",
        )
    return parsed.select(
        "chrom",
        "strand",
        pl.col("position_int").alias("position"),
        *(pl.col(f"{c}_float").cast(pl.Float32).alias(c) for c in SPLICE_TYPES),
        ROW,
    )


def check_strands_scored(path, scored: set[tuple[str, str]], genes: pl.DataFrame) -> None:
    """Every chromosome and strand that holds selected genes has scored positions (`scored`: the
    (chrom, strand) pairs with a row inside a gene): a table of one strand only would leave the
    other strand's sites silently unscored (no calls there)."""
    for chrom, strand, n_genes in (
        genes.group_by("chrom", "strand").agg(pl.len()).sort("chrom", "strand").iter_rows()
    ):
        if (chrom, strand) not in scored:
            raise InputError(
                path,
                "strand",
                f"no scored position on chromosome '{chrom}' strand '{strand}', "
                f"where {n_genes:,} selected gene(s) lie; score both strands of every gene",
            )


def check_within_chromosome(frame: pl.DataFrame, length: int, path) -> None:
    """A position past the chromosome's end (a huge one would alias onto another strand's key)."""
    beyond = frame.filter(pl.col("position") > length).head(1)
    if beyond.height:
        raise InputError(
            path,
            f"column 'position' row {beyond[ROW][0]}",
            f"{beyond['position'][0]:,} is past the end of chromosome '{beyond['chrom'][0]}' ({length:,} nt)",
        )


MIN_SCORED_SHARE = 0.95  # of the selected genes' positions; below it a table is a partial one


def gene_positions(genes: pl.DataFrame) -> int:
    """Positions covered by the genes' spans, overlapping genes of one strand counted once."""
    spans = genes.sort("chrom", "strand", "start").with_columns(
        pl.col("end").cum_max().shift(1).over("chrom", "strand").alias("reach")
    )
    starts_new = pl.col("reach").is_null() | (pl.col("start") > pl.col("reach"))
    merged = spans.with_columns(starts_new.cum_sum().over("chrom", "strand").alias("block")).group_by(
        "chrom", "strand", "block"
    )
    return int(merged.agg((pl.col("end").max() - pl.col("start").min() + 1).alias("n"))["n"].sum())


def check_scored_share(label: str, n_scored: int, genes: pl.DataFrame) -> None:
    """A table of peaks only (or of some genes) leaves sites unscored and no TN to draw: refused."""
    n_positions = gene_positions(genes)
    if n_scored < MIN_SCORED_SHARE * n_positions:
        raise InputError(
            label,
            "position",
            f"scores {n_scored:,} of the selected genes' {n_positions:,} positions ({n_scored / n_positions:.1%}); "
            "calls and TN are drawn from scored positions, so score every position of every gene",
        )
