"""Build one experiment's labelled window table (error vs correct calls).

Calls mode: `--genome-index DIR --calls CALLS` reads the splice-site calls,
labels `pred_type == --error-label` as 1 and `== --correct-label` as 0 (other
rows are dropped), cuts a window of `2*flank+1` nt centred on each site,
clipped to the gene span (when gene_start/gene_end are given) and to the
chromosome, and reverse-complements minus-strand windows. `--genome-index` may
also point at a FASTA file, parsed on the fly.

Sequences mode: `--sequences TABLE` takes ready-made windows with columns
`sequence` and `label` (0 = correct, 1 = error; integers or the strings
"0"/"1") and optional `gene_id` and `id`. Sequences are upper-cased and must
be non-empty ACGTN. Without `gene_id`, each row is its own split group (its
gene_id is set to its id). Without `id`, ids are `{experiment}:{row}`.

Both modes apply the same gene-level split and write one parquet with columns
id, gene_id, split, label (Int8), sequence, length (Int32) and, in calls mode,
chrom, position, strand, splice_type, pred_type.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl

from workflow_scripts.errors import InputError, run_cli
from workflow_scripts.data.genome import Genome, open_genome
from workflow_scripts.io_utils import write_parquet
from workflow_scripts.data.splits import assign_gene_splits, parse_fractions

REQUIRED_CALL_COLUMNS = ("gene_id", "chrom", "position", "strand", "splice_type", "pred_type")
PRED_TYPES = ("TP", "FP", "FN", "TN")
SPLICE_TYPES = ("donor", "acceptor")
ROW = "__row"


def read_table(path: str | Path) -> pl.DataFrame:
    """TSV (.tsv/.txt[.gz]), CSV (.csv[.gz]) or parquet, by extension; text columns stay strings."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "file", "not found")
    suffixes = [s.lower() for s in path.suffixes if s.lower() != ".gz"]
    kind = suffixes[-1] if suffixes else ""
    try:
        if kind in (".parquet", ".pq"):
            frame = pl.read_parquet(path)
        elif kind in (".tsv", ".txt", ".csv"):
            separator = "," if kind == ".csv" else "\t"
            frame = pl.read_csv(path, separator=separator, infer_schema=False)
        else:
            raise InputError(path, "file name", "unknown table format; use .tsv, .tsv.gz, .txt, .csv or .parquet")
    except (pl.exceptions.PolarsError, OSError) as error:
        raise InputError(path, "file", f"cannot be read as a {kind.lstrip('.')} table: {str(error).splitlines()[0]}") from None
    if frame.height == 0:
        raise InputError(path, "rows", "table has no data rows")
    return frame.with_row_index(ROW, offset=1)


def fail_on_first(frame: pl.DataFrame, bad: pl.Expr, path, column: str, problem: str) -> None:
    """Raise naming the first row (1-based data row) where `bad` holds."""
    hit = frame.filter(bad).head(1)
    if hit.height:
        value = hit[column][0]
        raise InputError(path, f"column '{column}' row {hit[ROW][0]}", f"{problem} (got {value!r})")


def require_columns(frame: pl.DataFrame, columns, path) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise InputError(path, f"column '{missing[0]}'", f"required column missing (found: {', '.join(c for c in frame.columns if c != ROW)})")


def as_integer(frame: pl.DataFrame, column: str, path, required: bool) -> pl.DataFrame:
    """Cast a column to Int64, naming the first value that is not an integer."""
    as_text = pl.col(column).cast(pl.String)
    parsed = as_text.str.strip_chars().cast(pl.Int64, strict=False)
    fail_on_first(frame, as_text.is_not_null() & parsed.is_null(), path, column, "not an integer")
    if required:
        fail_on_first(frame, pl.col(column).is_null(), path, column, "missing value")
    return frame.with_columns(parsed.alias(column))


def normalise_text_columns(frame: pl.DataFrame, path) -> pl.DataFrame:
    frame = frame.with_columns(pl.col(c).cast(pl.String).str.strip_chars() for c in REQUIRED_CALL_COLUMNS if c != "position")
    for column in ("gene_id", "chrom", "strand", "splice_type", "pred_type"):
        fail_on_first(frame, pl.col(column).is_null() | (pl.col(column) == ""), path, column, "missing value")
    frame = frame.with_columns(pl.col("splice_type").str.to_lowercase(), pl.col("pred_type").str.to_uppercase())
    fail_on_first(frame, ~pl.col("strand").is_in(["+", "-"]), path, "strand", "strand must be '+' or '-'")
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
    duplicate = ~pl.struct(REQUIRED_CALL_COLUMNS).is_first_distinct()
    fail_on_first(frame, duplicate, path, "position", "duplicate call: same gene_id, chrom, position, strand, splice_type, pred_type as an earlier row")
    return frame


def load_calls(path, genome: Genome) -> pl.DataFrame:
    """Read and validate a calls table; returns typed columns plus chrom_idx/chrom_length."""
    frame = read_table(path)
    require_columns(frame, REQUIRED_CALL_COLUMNS, path)
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


def extract_from_calls(genome: Genome, calls_path, experiment, error_label, correct_label, flank) -> pl.DataFrame:
    frame = label_rows(load_calls(calls_path, genome), experiment, error_label, correct_label, calls_path)
    starts, ends = window_bounds(frame, flank)
    minus = (frame["strand"] == "-").to_numpy()
    sequences = genome.window_strings(frame["chrom_idx"].to_numpy(), starts, ends, minus)
    return frame.with_columns(
        (pl.lit(f"{experiment}:") + pl.col(ROW).cast(pl.String)).alias("id"),
        sequences,
        pl.Series("length", ends - starts, dtype=pl.Int32),
    )


def extract_from_sequences(path, experiment) -> pl.DataFrame:
    """Validate a user table of ready-made windows (see module docstring)."""
    frame = read_table(path)
    require_columns(frame, ("sequence", "label"), path)
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


OUTPUT_COLUMNS = ("id", "gene_id", "split", "label", "sequence", "length")
CALL_COLUMNS = ("chrom", "position", "strand", "splice_type", "pred_type")


def finish(frame: pl.DataFrame, fractions, seed: int) -> pl.DataFrame:
    frame = frame.with_columns(assign_gene_splits(frame["gene_id"], fractions, seed).alias("split"))
    extra = [c for c in CALL_COLUMNS if c in frame.columns]
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


def parse_args(argv):
    parser = argparse.ArgumentParser(description="Extract labelled windows for one error-vs-correct experiment.")
    parser.add_argument("--genome-index", help="cached genome index dir (or a FASTA file)")
    parser.add_argument("--calls", help="calls table: .tsv/.tsv.gz/.txt/.csv/.parquet")
    parser.add_argument("--sequences", help="ready-made windows table (sequence, label[, gene_id, id])")
    parser.add_argument("--experiment", required=True)
    parser.add_argument("--error-label", default="FP")
    parser.add_argument("--correct-label", default="TP")
    parser.add_argument("--flank", type=int, default=200)
    parser.add_argument("--split-fractions", default="0.8,0.1,0.1")
    parser.add_argument("--split-seed", type=int, default=42)
    parser.add_argument("--out", required=True)
    return parser.parse_args(argv)


def check_mode(args) -> None:
    if args.sequences and (args.calls or args.genome_index):
        raise InputError("command line", "--sequences", "use either --sequences or --genome-index with --calls, not both")
    if not args.sequences and not (args.calls and args.genome_index):
        raise InputError("command line", "--calls/--genome-index", "both are required unless --sequences is given")
    if args.flank < 0:
        raise InputError("command line", "--flank", f"must be >= 0, got {args.flank}")
    for flag, value in (("--error-label", args.error_label), ("--correct-label", args.correct_label)):
        if value.upper() not in PRED_TYPES:
            raise InputError("command line", flag, f"must be one of TP, FP, FN, TN, got {value!r}")
    if args.error_label.upper() == args.correct_label.upper():
        raise InputError("command line", "--correct-label", "must differ from --error-label")


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    check_mode(args)
    fractions = parse_fractions(args.split_fractions)
    began = time.perf_counter()
    if args.sequences:
        frame = extract_from_sequences(args.sequences, args.experiment)
    else:
        genome = open_genome(args.genome_index)
        frame = extract_from_calls(
            genome, args.calls, args.experiment, args.error_label.upper(), args.correct_label.upper(), args.flank
        )
    frame = finish(frame, fractions, args.split_seed)
    write_parquet(frame, args.out)
    print(summary_line(frame, args.experiment, time.perf_counter() - began), file=sys.stderr)


if __name__ == "__main__":
    run_cli(main)
