"""Read and check a calls table (the contract in calls.py) against the genome it is cut from.

Checks, each an InputError naming the file, the column and the first bad row: the header
(required columns, no duplicated or reserved names), values (strand, splice_type, pred_type,
integer positions, a numeric score), chromosomes known to the genome, positions inside the
chromosome and the gene span, and one call per site (chrom, position, strand, splice_type):

* a site called again with another pred_type (contradictory labels: identical windows labelled
  0 and 1), or with another gene_id or score (identical windows, possibly in two splits), is
  refused, naming both rows;
* a row repeating an earlier row in every column is refused too ("duplicate call"), not dropped:
  errorseq's own calls never repeat a row, so a repeat means the table was put together wrongly
  (concatenated twice, a join that multiplied rows), which dropping would hide.

Columns errorseq knows are typed (position, gene_start, gene_end: Int64; score: Float64); other
columns are kept as read (text tables: strings) and end up in windows.parquet.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import polars as pl

from workflow_scripts.data.calls import (
    CALL_COLUMNS,
    PRED_TYPES,
    SITE_KEY,
    SPLICE_TYPES,
    STRANDS,
    check_calls_header,
)
from workflow_scripts.data.genome import Genome
from workflow_scripts.data.tables import ROW, fail_on_first, numbered_rows, read_table
from workflow_scripts.errors import InputError

CHROM_INDEX = "__chrom_idx"
CHROM_LENGTH = "__chrom_length"
GENE_LOW = "__gene_low"  # the gene span, defaulting to the whole chromosome (1-based, inclusive)
GENE_HIGH = "__gene_high"


def read_rows(path, check_header: Callable[[str, list[str]], None]) -> pl.DataFrame:
    """A non-empty input table whose header passes `check_header`, with its 1-based row numbers
    (for error messages)."""
    frame = read_table(path)
    check_header(path, frame.columns)
    if frame.height == 0:
        raise InputError(path, "rows", "table has no data rows")
    return numbered_rows(frame)


def as_integer(frame: pl.DataFrame, column: str, path, required: bool) -> pl.DataFrame:
    """Cast a column to Int64, naming the first value that is not an integer."""
    as_text = pl.col(column).cast(pl.String)
    parsed = as_text.str.strip_chars().cast(pl.Int64, strict=False)
    fail_on_first(frame, as_text.is_not_null() & parsed.is_null(), path, column, "not an integer")
    if required:
        fail_on_first(frame, pl.col(column).is_null(), path, column, "missing value")
    return frame.with_columns(parsed.alias(column))


def as_number(frame: pl.DataFrame, column: str, path) -> pl.DataFrame:
    """Cast an optional column to Float64 (empty = missing), naming the first value that is not a number."""
    as_text = pl.col(column).cast(pl.String).str.strip_chars()
    parsed = as_text.cast(pl.Float64, strict=False)
    bad = as_text.is_not_null() & (as_text != "") & (parsed.is_null() | parsed.is_nan())
    fail_on_first(frame, bad, path, column, "not a number")
    return frame.with_columns(parsed.alias(column))


def normalise_text_columns(frame: pl.DataFrame, path) -> pl.DataFrame:
    frame = frame.with_columns(
        pl.col(c).cast(pl.String).str.strip_chars() for c in CALL_COLUMNS if c != "position"
    )
    for column in ("gene_id", "chrom", "strand", "splice_type", "pred_type"):
        fail_on_first(frame, pl.col(column).is_null() | (pl.col(column) == ""), path, column, "missing value")
    frame = frame.with_columns(
        pl.col("splice_type").str.to_lowercase(), pl.col("pred_type").str.to_uppercase()
    )
    fail_on_first(frame, ~pl.col("strand").is_in(STRANDS), path, "strand", "strand must be '+' or '-'")
    fail_on_first(
        frame,
        ~pl.col("splice_type").is_in(SPLICE_TYPES),
        path,
        "splice_type",
        "splice_type must be donor or acceptor",
    )
    fail_on_first(
        frame,
        ~pl.col("pred_type").is_in(PRED_TYPES),
        path,
        "pred_type",
        "pred_type must be one of TP, FP, FN, TN",
    )
    return frame


def chrom_hint(name: str, genome: Genome) -> str:
    return name_hint(name, genome.names, "genome")


def name_hint(name: str, names: list[str], where: str = "annotation") -> str:
    """'; did you mean chr1?' for 1 (and the other way round), else the first names there are."""
    alternative = name[3:] if name.lower().startswith("chr") else f"chr{name}"
    if alternative in names:
        return f"; did you mean '{alternative}'?"
    return f"; {where} has {', '.join(names[:5])}{', ...' if len(names) > 5 else ''}"


def attach_chromosomes(frame: pl.DataFrame, genome: Genome, path) -> pl.DataFrame:
    """Add CHROM_INDEX and CHROM_LENGTH; unknown chromosomes are an error with a hint."""
    chroms = pl.DataFrame(
        {"chrom": genome.names, CHROM_INDEX: np.arange(len(genome)), CHROM_LENGTH: genome.lengths},
        schema={"chrom": pl.String, CHROM_INDEX: pl.Int64, CHROM_LENGTH: pl.Int64},
    )
    frame = frame.join(chroms, on="chrom", how="left", maintain_order="left")
    hit = frame.filter(pl.col(CHROM_INDEX).is_null()).head(1)
    if hit.height:
        name = hit["chrom"][0]
        raise InputError(
            path,
            f"column 'chrom' row {hit[ROW][0]}",
            f"chromosome '{name}' not in genome{chrom_hint(name, genome)}",
        )
    return frame


def validate_coordinates(frame: pl.DataFrame, path) -> pl.DataFrame:
    """Positions inside the chromosome and the gene span (GENE_LOW..GENE_HIGH: the gene bounds,
    the chromosome where a row has none)."""
    position = pl.col("position")
    fail_on_first(
        frame,
        (position < 1) | (position > pl.col(CHROM_LENGTH)),
        path,
        "position",
        "position outside the chromosome (1..chromosome length)",
    )
    low = pl.col("gene_start").fill_null(1) if "gene_start" in frame.columns else pl.lit(1, dtype=pl.Int64)
    high = (
        pl.col("gene_end").fill_null(pl.col(CHROM_LENGTH))
        if "gene_end" in frame.columns
        else pl.col(CHROM_LENGTH)
    )
    frame = frame.with_columns(low.alias(GENE_LOW), high.alias(GENE_HIGH))
    fail_on_first(frame, pl.col(GENE_LOW) < 1, path, "gene_start", "gene_start must be >= 1")
    fail_on_first(
        frame,
        pl.col(GENE_HIGH) > pl.col(CHROM_LENGTH),
        path,
        "gene_end",
        "gene_end beyond the chromosome end",
    )
    fail_on_first(frame, pl.col(GENE_LOW) > pl.col(GENE_HIGH), path, "gene_start", "gene_start > gene_end")
    outside = (position < pl.col(GENE_LOW)) | (position > pl.col(GENE_HIGH))
    fail_on_first(frame, outside, path, "position", "position outside its gene span [gene_start, gene_end]")
    return frame


def refuse_repeated_sites(frame: pl.DataFrame, path) -> None:
    """InputError at the first row calling a site that an earlier row called (see module docstring)."""
    first_row = pl.col(ROW).first().over(SITE_KEY).alias("__first")
    later = frame.with_columns(first_row).filter(pl.col(ROW) != pl.col("__first"))
    if later.height == 0:
        return
    row = later.row(0, named=True)
    first = frame.filter(pl.col(ROW) == row["__first"]).row(0, named=True)
    differ = [c for c in frame.columns if c != ROW and row[c] != first[c]]
    site = f"site {row['chrom']}:{row['position']} {row['strand']} {row['splice_type']}"
    if not differ:
        field, problem = "column 'position'", f"duplicate call: the same as row {first[ROW]} in every column"
    elif "pred_type" in differ:
        field, problem = (
            "column 'pred_type'",
            (
                f"{site} is called {row['pred_type']} here and {first['pred_type']} "
                f"in row {first[ROW]}: contradictory labels"
            ),
        )
    else:
        field, problem = (
            "",
            f"{site} is called again (first in row {first[ROW]}) with a different {', '.join(differ)}",
        )
    raise InputError(path, f"{field} row {row[ROW]}".strip(), f"{problem}; keep one call per site")


def load_calls(path, genome: Genome) -> pl.DataFrame:
    """A checked calls table with typed columns plus the internal ones (CHROM_INDEX, ...)."""
    frame = read_rows(path, check_calls_header)
    frame = normalise_text_columns(frame, path)
    frame = as_integer(frame, "position", path, required=True)
    for column in ("gene_start", "gene_end"):
        if column in frame.columns:
            frame = as_integer(frame, column, path, required=False)
    if "score" in frame.columns:
        frame = as_number(frame, "score", path)
    refuse_repeated_sites(frame, path)
    frame = attach_chromosomes(frame, genome, path)
    return validate_coordinates(frame, path)
