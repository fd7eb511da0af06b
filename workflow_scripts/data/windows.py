"""Build one experiment's labelled window table (error vs correct calls): the extract rule.

Calls mode (`windows_from_calls`): reads the splice-site calls, labels `pred_type ==
error_label` as 1 and `== correct_label` as 0 (other rows are dropped), cuts a window of
`2*flank+1` nt centred on each site, clipped to the gene span (when gene_start/gene_end are
given) and to the chromosome, and reverse-complements minus-strand windows.

Sequences mode (`windows_from_sequences`): takes ready-made windows with columns `sequence` and
`label` (0 = correct, 1 = error; integers or the strings "0"/"1") and optional `gene_id` and
`id`. Sequences are upper-cased and must be non-empty ACGTN. Without `gene_id`, each row is its
own split group (its gene_id is set to its id). Without `id`, ids are `{experiment}:{row}`.

Both modes apply the same gene-level split (`split_windows`); the table has the columns id,
gene_id, split, label (Int8), sequence, length (Int32) and, in calls mode, the call columns
chrom, position, strand, splice_type, pred_type.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

from workflow_scripts.data.calls import CALL_COLUMNS, PRED_TYPES, SEQUENCE_COLUMNS, SPLICE_TYPES, STRANDS
from workflow_scripts.data.genome import Genome
from workflow_scripts.data.splits import assign_gene_splits, split_fractions
from workflow_scripts.data.tables import ROW, fail_on_first, numbered_rows, read_table
from workflow_scripts.errors import InputError

OUTPUT_COLUMNS = ("id", "gene_id", "split", "label", "sequence", "length")
WINDOW_CALL_COLUMNS = tuple(column for column in CALL_COLUMNS if column != "gene_id")


def read_rows(path, required) -> pl.DataFrame:
    """A non-empty input table with its 1-based row numbers (for error messages)."""
    frame = read_table(path, required=required)
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


def normalise_text_columns(frame: pl.DataFrame, path) -> pl.DataFrame:
    frame = frame.with_columns(pl.col(c).cast(pl.String).str.strip_chars() for c in CALL_COLUMNS if c != "position")
    for column in ("gene_id", "chrom", "strand", "splice_type", "pred_type"):
        fail_on_first(frame, pl.col(column).is_null() | (pl.col(column) == ""), path, column, "missing value")
    frame = frame.with_columns(pl.col("splice_type").str.to_lowercase(), pl.col("pred_type").str.to_uppercase())
    fail_on_first(frame, ~pl.col("strand").is_in(STRANDS), path, "strand", "strand must be '+' or '-'")
    fail_on_first(frame, ~pl.col("splice_type").is_in(SPLICE_TYPES), path, "splice_type", "splice_type must be donor or acceptor")
    fail_on_first(frame, ~pl.col("pred_type").is_in(PRED_TYPES), path, "pred_type", "pred_type must be one of TP, FP, FN, TN")
    return frame


def chrom_hint(name: str, genome: Genome) -> str:
    alternative = name[3:] if name.lower().startswith("chr") else f"chr{name}"
    if alternative in genome.index_of:
        return f"; did you mean '{alternative}'?"
    return f"; genome has {', '.join(genome.names[:5])}{', ...' if len(genome) > 5 else ''}"


def attach_chromosomes(frame: pl.DataFrame, genome: Genome, path) -> pl.DataFrame:
    """Add chrom_idx and chrom_length; unknown chromosomes are an error with a hint."""
    chroms = pl.DataFrame(
        {"chrom": genome.names, "chrom_idx": np.arange(len(genome)), "chrom_length": genome.lengths},
        schema={"chrom": pl.String, "chrom_idx": pl.Int64, "chrom_length": pl.Int64},
    )
    frame = frame.join(chroms, on="chrom", how="left", maintain_order="left")
    hit = frame.filter(pl.col("chrom_idx").is_null()).head(1)
    if hit.height:
        name = hit["chrom"][0]
        raise InputError(path, f"column 'chrom' row {hit[ROW][0]}", f"chromosome '{name}' not in genome{chrom_hint(name, genome)}")
    return frame


def validate_coordinates(frame: pl.DataFrame, path) -> pl.DataFrame:
    """Positions inside the chromosome and the gene span; gene bounds default to the chromosome."""
    position = pl.col("position")
    fail_on_first(frame, (position < 1) | (position > pl.col("chrom_length")), path, "position", "position outside the chromosome (1..chromosome length)")
    frame = frame.with_columns(
        pl.col("gene_start").fill_null(1), pl.col("gene_end").fill_null(pl.col("chrom_length"))
    )
    fail_on_first(frame, pl.col("gene_start") < 1, path, "gene_start", "gene_start must be >= 1")
    fail_on_first(frame, pl.col("gene_end") > pl.col("chrom_length"), path, "gene_end", "gene_end beyond the chromosome end")
    fail_on_first(frame, pl.col("gene_start") > pl.col("gene_end"), path, "gene_start", "gene_start > gene_end")
    outside = (position < pl.col("gene_start")) | (position > pl.col("gene_end"))
    fail_on_first(frame, outside, path, "position", "position outside its gene span [gene_start, gene_end]")
    duplicate = ~pl.struct(CALL_COLUMNS).is_first_distinct()
    fail_on_first(frame, duplicate, path, "position", "duplicate call: same gene_id, chrom, position, strand, splice_type, pred_type as an earlier row")
    return frame


def load_calls(path, genome: Genome) -> pl.DataFrame:
    """Read and validate a calls table; returns typed columns plus chrom_idx/chrom_length."""
    frame = read_rows(path, CALL_COLUMNS)
    frame = normalise_text_columns(frame, path)
    frame = as_integer(frame, "position", path, required=True)
    for column in ("gene_start", "gene_end"):
        if column in frame.columns:
            frame = as_integer(frame, column, path, required=False)
        else:
            frame = frame.with_columns(pl.lit(None, dtype=pl.Int64).alias(column))
    frame = attach_chromosomes(frame, genome, path)
    return validate_coordinates(frame, path)


def label_rows(frame: pl.DataFrame, experiment: str, error_label: str, correct_label: str, path) -> pl.DataFrame:
    """Keep error/correct rows, label 1/0; both classes must be present."""
    frame = frame.filter(pl.col("pred_type").is_in([error_label, correct_label]))
    frame = frame.with_columns((pl.col("pred_type") == error_label).cast(pl.Int8).alias("label"))
    require_both_classes(frame, experiment, path, error_label, correct_label)
    return frame


def require_both_classes(frame: pl.DataFrame, experiment, path, error_name="label 1", correct_name="label 0") -> None:
    for value, name, role in ((1, error_name, "error"), (0, correct_name, "correct")):
        if frame.filter(pl.col("label") == value).height == 0:
            raise InputError(path, f"experiment '{experiment}'", f"no {name} rows ({role} class) in {Path(path).name}")


def window_bounds(frame: pl.DataFrame, flank: int) -> tuple[np.ndarray, np.ndarray]:
    """0-based half-open windows centred on the site, clipped to gene span and chromosome."""
    centre = frame["position"].to_numpy() - 1
    low = np.maximum(frame["gene_start"].to_numpy() - 1, 0)
    high = np.minimum(frame["gene_end"].to_numpy(), frame["chrom_length"].to_numpy())
    return np.maximum(centre - flank, low), np.minimum(centre + flank + 1, high)


def windows_from_calls(genome: Genome, calls_path, experiment: dict, window: dict) -> pl.DataFrame:
    """Labelled windows of one experiment (an `experiments:` entry) around its calls."""
    name = experiment["name"]
    frame = label_rows(load_calls(calls_path, genome), name, experiment["error_label"],
                       experiment["correct_label"], calls_path)
    starts, ends = window_bounds(frame, window["flank"])
    minus = (frame["strand"] == "-").to_numpy()
    sequences = genome.window_strings(frame["chrom_idx"].to_numpy(), starts, ends, minus)
    return frame.with_columns(
        (pl.lit(f"{name}:") + pl.col(ROW).cast(pl.String)).alias("id"),
        sequences,
        pl.Series("length", ends - starts, dtype=pl.Int32),
    )


def windows_from_sequences(path, experiment: str) -> pl.DataFrame:
    """Validate a user table of ready-made windows (see module docstring)."""
    frame = read_rows(path, SEQUENCE_COLUMNS)
    frame = frame.with_columns(pl.col("sequence").cast(pl.String).str.strip_chars().str.to_uppercase())
    fail_on_first(frame, pl.col("sequence").is_null() | (pl.col("sequence") == ""), path, "sequence", "empty sequence")
    fail_on_first(frame, ~pl.col("sequence").str.contains(r"^[ACGTN]+$"), path, "sequence", "sequence has characters other than A, C, G, T, N")
    label_text = pl.col("label").cast(pl.String).str.strip_chars()
    fail_on_first(frame, label_text.is_null() | ~label_text.is_in(["0", "1"]), path, "label", "label must be 0 (correct) or 1 (error)")
    frame = frame.with_columns(label_text.cast(pl.Int8).alias("label"))
    require_both_classes(frame, experiment, path)
    frame = with_ids(frame, experiment, path)
    return frame.with_columns(pl.col("sequence").str.len_bytes().cast(pl.Int32).alias("length"))


def with_ids(frame: pl.DataFrame, experiment, path) -> pl.DataFrame:
    if "id" in frame.columns:
        frame = frame.with_columns(pl.col("id").cast(pl.String))
        fail_on_first(frame, pl.col("id").is_null(), path, "id", "missing id")
        fail_on_first(frame, ~pl.col("id").is_first_distinct(), path, "id", "duplicate id: an earlier row has it")
    else:
        frame = frame.with_columns((pl.lit(f"{experiment}:") + pl.col(ROW).cast(pl.String)).alias("id"))
    if "gene_id" in frame.columns:
        frame = frame.with_columns(pl.col("gene_id").cast(pl.String))
        fail_on_first(frame, pl.col("gene_id").is_null(), path, "gene_id", "missing gene_id")
    else:
        frame = frame.with_columns(pl.col("id").alias("gene_id"))
    return frame


def split_windows(frame: pl.DataFrame, split: dict) -> pl.DataFrame:
    """The output table: a gene-level split (the `split:` config section) and the output columns."""
    splits = assign_gene_splits(frame["gene_id"], split_fractions(split), split["seed"])
    frame = frame.with_columns(splits.alias("split"))
    extra = [c for c in WINDOW_CALL_COLUMNS if c in frame.columns]
    return frame.select(*OUTPUT_COLUMNS, *extra)


def summary_line(frame: pl.DataFrame, experiment: str, seconds: float) -> str:
    counts = frame.group_by("split", "label").len()
    parts = []
    for split in ("train", "val", "test"):
        rows = counts.filter(pl.col("split") == split)
        error = int(rows.filter(pl.col("label") == 1)["len"].sum())
        correct = int(rows.filter(pl.col("label") == 0)["len"].sum())
        parts.append(f"{split} {error + correct} ({error} error/{correct} correct)")
    return f"extract: experiment '{experiment}': {frame.height} windows; {'; '.join(parts)}; {seconds:.2f} s"
