"""A new calls table for predict, read in chunks and cut into windows the way extract cuts them.

Needed columns: chrom, position (1-based), strand, plus whatever the trained model reads besides
the sequence (model.json artifacts.MODEL_INPUT_COLUMNS_FIELD, e.g. the base score). No labels:
pred_type, gene_id and any other column are optional and carried through unchanged. Each chunk
is checked (positions are integers inside their chromosome, strands + or -, chromosomes the
genome has, model inputs present); a problem is one InputError naming the file, the column and
the row. Rows are never dropped or reordered, and a site may be scored twice.

Tables are pulled a chunk at a time, only when the next chunk is asked for, so memory holds one
chunk whatever the table's size: parquet as row slices of a lazy scan (a slice decodes only the
row groups it overlaps), text tables (.tsv/.txt/.csv, plain or gzip) as blocks of lines parsed by
polars with the header in front, so a chunk reads exactly as the same rows of the whole file. A
block is extended while it holds an odd number of quote characters, so a quoted value spanning
lines is never cut. (polars' `collect_batches` was not used: its engine reads ahead of a slow
consumer, the model, and held up to the whole table: docs/performance.md, predict.)
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterator, Sequence
from io import BufferedIOBase
from itertools import islice
from pathlib import Path

import polars as pl

from workflow_scripts.artifacts import NEW_CALL_PREDICTION_COLUMNS
from workflow_scripts.data.call_table import CHROM_INDEX, CHROM_LENGTH, as_integer, attach_chromosomes
from workflow_scripts.data.calls import INTERNAL_PREFIX, STRANDS
from workflow_scripts.data.genome import Genome
from workflow_scripts.data.tables import (
    GZIP_MAGIC,
    PARQUET_SUFFIXES,
    ROW,
    TEXT_SEPARATORS,
    clean_name,
    fail_on_first,
    raw_columns,
    require_columns,
    table_columns,
    table_suffix,
)
from workflow_scripts.data.windows import call_windows
from workflow_scripts.errors import InputError

SITE_COLUMNS = ("chrom", "position", "strand")


def check_header(path: str | Path, model_inputs: Sequence[str], model_config: str) -> list[str]:
    """The table's column names; InputError for a missing site or model column or a name predict writes."""
    names = table_columns(path)
    require_columns(path, names, SITE_COLUMNS)
    for name in model_inputs:
        if name not in names:
            raise InputError(
                path,
                f"column '{name}'",
                f"required column missing: the model reads it ({model_config} lists it)",
            )
    for name in names:
        if name in NEW_CALL_PREDICTION_COLUMNS or name.startswith(INTERNAL_PREFIX):
            raise InputError(
                path,
                f"column '{name}'",
                "reserved name: predict writes a column of that name; rename or drop this column",
            )
    return names


def is_gzip(path: str | Path) -> bool:
    with open(path, "rb") as handle:
        return handle.read(2) == GZIP_MAGIC


def header_names(path: str | Path) -> list[str]:
    """Every header field under its cleaned name; an unnamed one gets an INTERNAL_PREFIX name."""
    names = [clean_name(name) for name in raw_columns(path, "file")]
    return [name or f"{INTERNAL_PREFIX}unnamed{i}" for i, name in enumerate(names)]


def calls_schema(path: str | Path) -> pl.Schema:
    """The table's columns and types, without reading rows (text: every column a string)."""
    if table_suffix(path) in PARQUET_SUFFIXES:
        return pl.Schema(pl.read_parquet_schema(path))
    return pl.Schema({name: pl.String for name in header_names(path) if not name.startswith(INTERNAL_PREFIX)})


def read_chunks(path: str | Path, chunk_size: int) -> Iterator[pl.DataFrame]:
    """The rows in order, `chunk_size` at a time, each with its 1-based row number (ROW) first."""
    chunks = parquet_chunks if table_suffix(path) in PARQUET_SUFFIXES else text_chunks
    first_row = 1
    try:
        for chunk in chunks(path, chunk_size):
            yield chunk.with_row_index(ROW, offset=first_row)
            first_row += chunk.height
    except (pl.exceptions.PolarsError, OSError, EOFError, zlib.error) as error:
        first_line = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise InputError(path, "file", f"cannot be read as a table ({first_line})") from None


def parquet_chunks(path: str | Path, chunk_size: int) -> Iterator[pl.DataFrame]:
    table, offset = pl.scan_parquet(path), 0
    while (chunk := table.slice(offset, chunk_size).collect()).height:
        yield chunk
        offset += chunk.height


def text_chunks(path: str | Path, chunk_size: int) -> Iterator[pl.DataFrame]:
    separator, named = TEXT_SEPARATORS[table_suffix(path)], header_names(path)
    kept = [name for name in named if not name.startswith(INTERNAL_PREFIX)]
    with (gzip.open if is_gzip(path) else open)(path, "rb") as handle:
        header = handle.readline()
        while block := next_lines(handle, chunk_size):
            frame = pl.read_csv(header + block, separator=separator, infer_schema=False, new_columns=named)
            yield frame.select(kept)


def next_lines(handle: BufferedIOBase, count: int) -> bytes:
    """The next `count` lines, and more while a quoted value is open (an odd number of quotes)."""
    block = b"".join(islice(handle, count))
    quotes, more = block.count(b'"'), []
    while quotes % 2 and (line := handle.readline()):
        more.append(line)
        quotes += line.count(b'"')
    return block + b"".join(more) if more else block


def checked_chunk(chunk: pl.DataFrame, path, genome: Genome, model_inputs: Sequence[str]) -> pl.DataFrame:
    """The chunk with position as Int64, strand stripped and the genome's chromosome index."""
    chunk = as_integer(chunk, "position", path, required=True)
    chunk = chunk.with_columns(
        pl.col("chrom").cast(pl.String).str.strip_chars(), pl.col("strand").cast(pl.String).str.strip_chars()
    )
    fail_on_first(chunk, pl.col("chrom").is_null() | (pl.col("chrom") == ""), path, "chrom", "missing value")
    fail_on_first(
        chunk, ~pl.col("strand").is_in(STRANDS).fill_null(False), path, "strand", "strand must be '+' or '-'"
    )
    for name in model_inputs:
        fail_on_first(
            chunk, pl.col(name).is_null(), path, name, "missing value (the model reads this column)"
        )
    chunk = attach_chromosomes(chunk, genome, path)
    position = pl.col("position")
    fail_on_first(
        chunk,
        (position < 1) | (position > pl.col(CHROM_LENGTH)),
        path,
        "position",
        "position outside the chromosome (1..chromosome length)",
    )
    return chunk


def chunk_windows(chunk: pl.DataFrame, genome: Genome, flank: int) -> pl.DataFrame:
    """sequence, length and site_offset of each checked call (data/windows.call_windows)."""
    return pl.DataFrame(call_windows(genome, chunk, flank))


def call_columns(chunk: pl.DataFrame) -> pl.DataFrame:
    """The input table's own columns of a checked chunk (extraction's working columns dropped)."""
    return chunk.select(
        name
        for name in chunk.columns
        if not name.startswith(INTERNAL_PREFIX) and name not in (CHROM_INDEX, CHROM_LENGTH)
    )
