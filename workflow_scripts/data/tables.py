"""The one reader of tables: TSV, CSV or parquet, chosen by the file's extension.

Text tables (.tsv, .txt, .csv, each optionally gzip-compressed) are read with every column as a
string, so values such as 'chr01' or '007' are never reinterpreted; the code that checks a
column converts it and names the first bad row. Every problem is an InputError naming the file.

Header names are read the same way everywhere (the preflight's `table_columns` and `read_table`):
a byte-order mark, surrounding blanks and quotes are removed (`clean_name`); columns without a
name (a trailing separator) are ignored; two columns with one name are an error, never renamed.

polars is imported inside the readers: the workflow calls `table_columns` while Snakemake
parses it (config preflight), and the parse should not pay for importing polars.
"""

from __future__ import annotations

import csv
import gzip
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from workflow_scripts.errors import InputError

if TYPE_CHECKING:
    import polars as pl

TEXT_SEPARATORS = {".tsv": "\t", ".txt": "\t", ".csv": ","}
PARQUET_SUFFIXES = (".parquet", ".pq")
GZIP_MAGIC = b"\x1f\x8b"
ROW = "__row"  # 1-based data row number, added by `numbered_rows` for error messages
BYTE_ORDER_MARK = "\ufeff"


def table_suffix(path: str | Path, field: str = "file") -> str:
    """The extension that names the format ('.tsv' for calls.tsv.gz); InputError if unknown."""
    suffixes = [s.lower() for s in Path(path).suffixes if s.lower() != ".gz"]
    suffix = suffixes[-1] if suffixes else ""
    if suffix not in TEXT_SEPARATORS and suffix not in PARQUET_SUFFIXES:
        raise InputError(path, field, "unknown table format; use .tsv, .tsv.gz, .txt, .csv or .parquet")
    return suffix


def require_file(path: str | Path, field: str = "file") -> None:
    if not Path(path).is_file():
        raise InputError(path, field, "file not found")


def table_columns(path: str | Path, field: str = "file") -> list[str]:
    """The column names (cleaned, unnamed ones left out), from the header line or the parquet
    schema, without reading rows; InputError when two columns share a name."""
    names = unique_names(path, [clean_name(name) for name in raw_columns(path, field)])
    return [name for name in names if name]


def raw_columns(path: str | Path, field: str) -> list[str]:
    """Every header field as written (parquet: the schema's names), unnamed ones included."""
    require_file(path, field)
    suffix = table_suffix(path, field)
    if suffix in PARQUET_SUFFIXES:
        import polars as pl

        try:
            return list(pl.read_parquet_schema(path))
        except (OSError, pl.exceptions.PolarsError) as error:
            raise unreadable(path, field, suffix, error) from None
    return header_fields(path, field, TEXT_SEPARATORS[suffix])


def clean_name(name: str) -> str:
    """A header name as errorseq reads it: no byte-order mark, surrounding blanks or quotes."""
    return name.replace(BYTE_ORDER_MARK, "").strip().strip('"').strip()


def unique_names(path: str | Path, names: list[str]) -> list[str]:
    """`names` unchanged; InputError naming the first name given to two columns ('' is no name)."""
    seen: dict[str, int] = {}
    for number, name in enumerate(names, start=1):
        if name in seen and name:
            raise InputError(
                path,
                f"column '{name}'",
                f"duplicated header: columns {seen[name]} and {number} are both named '{name}'",
            )
        seen[name] = number
    return names


def header_fields(path: str | Path, field: str, separator: str) -> list[str]:
    with open(path, "rb") as handle:
        compressed = handle.read(2) == GZIP_MAGIC
    opener = gzip.open if compressed else open
    try:
        with opener(path, "rt", encoding="utf-8", newline="") as handle:
            line = handle.readline()
    except (OSError, EOFError, UnicodeDecodeError, zlib.error) as error:
        raise InputError(path, field, f"cannot be read as text ({error})") from None
    return next(csv.reader([line.rstrip("\r\n")], delimiter=separator), [])


def require_columns(path: str | Path, found: Sequence[str], required: Sequence[str]) -> None:
    """InputError naming the first required column that `found` lacks."""
    missing = [name for name in required if name not in found]
    if missing:
        shown = ", ".join(name for name in found if name != ROW) or "none"
        raise InputError(path, f"column '{missing[0]}'", f"required column missing (found: {shown})")


def read_table(
    path: str | Path, required: Sequence[str] = (), columns: Sequence[str] | None = None, field: str = "file"
) -> pl.DataFrame:
    """The table's rows (only `columns` when given) under their cleaned header names; every name
    in `required` must be a column."""
    import polars as pl

    names = [clean_name(name) for name in raw_columns(path, field)]
    require_columns(path, table_columns(path, field), [*required, *(columns or ())])
    wanted = list(columns) if columns else [name for name in names if name]
    positions = [names.index(name) for name in wanted]
    suffix = table_suffix(path, field)
    try:
        if suffix in PARQUET_SUFFIXES:
            frame = pl.read_parquet(path, columns=positions)
        else:
            frame = pl.read_csv(
                path, separator=TEXT_SEPARATORS[suffix], infer_schema=False, columns=positions
            )
    except (pl.exceptions.PolarsError, OSError) as error:
        raise unreadable(path, field, suffix, error) from None
    return frame.rename(dict(zip(frame.columns, wanted)))


def scan_table(
    path: str | Path, required: Sequence[str] = (), columns: Sequence[str] | None = None, field: str = "file"
) -> pl.LazyFrame:
    """read_table as a lazy frame with ROW numbers: a parquet table is scanned, so a filter
    (one chromosome, say) reads only what it keeps; a text table is read whole. Errors that
    show only when the scan runs come from `collect_table`."""
    import polars as pl

    suffix = table_suffix(path, field)
    if suffix not in PARQUET_SUFFIXES:
        return numbered_rows(read_table(path, required, columns, field)).lazy()
    names = [clean_name(name) for name in raw_columns(path, field)]
    require_columns(path, table_columns(path, field), [*required, *(columns or ())])
    wanted = list(columns) if columns else [name for name in names if name]
    raw = list(pl.read_parquet_schema(path))
    scan = pl.scan_parquet(path).select(pl.col(raw[names.index(name)]).alias(name) for name in wanted)
    return scan.with_row_index(ROW, offset=1)


def collect_table(frame: pl.LazyFrame, path: str | Path, field: str = "file") -> pl.DataFrame:
    import polars as pl

    try:
        return frame.collect(engine="streaming")
    except (pl.exceptions.PolarsError, OSError) as error:
        raise unreadable(path, field, table_suffix(path, field), error) from None


def collect_batches(frame: pl.LazyFrame, path: str | Path, rows: int, field: str = "file"):
    """collect_table a slice of about `rows` rows at a time, in order (memory holds one slice)."""
    import polars as pl

    try:
        yield from frame.collect_batches(chunk_size=rows, maintain_order=True)
    except (pl.exceptions.PolarsError, OSError) as error:
        raise unreadable(path, field, table_suffix(path, field), error) from None


def unreadable(path: str | Path, field: str, suffix: str, error: Exception) -> InputError:
    first_line = str(error).splitlines()[0] if str(error) else type(error).__name__
    return InputError(path, field, f"cannot be read as a {suffix.lstrip('.')} table ({first_line})")


def numbered_rows(frame: pl.DataFrame) -> pl.DataFrame:
    """The frame with a 1-based data row number (column ROW) that error messages cite."""
    return frame.with_row_index(ROW, offset=1)


def fail_on_first(frame: pl.DataFrame, bad: pl.Expr, path, column: str, problem: str) -> None:
    """InputError naming the first row (by ROW) where `bad` holds, and its value."""
    hit = frame.filter(bad).head(1)
    if hit.height:
        value = hit[column][0]
        raise InputError(path, f"column '{column}' row {hit[ROW][0]}", f"{problem} (got {value!r})")


def remove_stale_parts(out: Path) -> None:
    """Part folders of an earlier writer of `out` that was killed (SIGKILL, power loss): Snakemake
    runs one job per output, so none of them is still being written."""
    import shutil

    for stale in out.parent.glob(f".{out.name}.parts.*"):
        shutil.rmtree(stale, ignore_errors=True)


class ParquetParts:
    """A table too big for memory, written as parquet parts in a scratch folder beside `out` and
    joined into `out` atomically by `close`. Frames are gathered until `part_rows` rows (1 = a
    part per frame). Use as a context manager: the scratch folder goes whatever happens, and an
    exception leaves no `out`."""

    def __init__(
        self, out: str | Path, empty: pl.DataFrame, part_rows: int = 1, metadata: dict[str, str] | None = None
    ):
        import tempfile

        self.out, self.empty, self.part_rows, self.metadata = Path(out), empty, part_rows, metadata
        self.out.parent.mkdir(parents=True, exist_ok=True)
        remove_stale_parts(self.out)
        self.parts_dir = Path(tempfile.mkdtemp(prefix=f".{self.out.name}.parts.", dir=self.out.parent))
        self.frames: list[pl.DataFrame] = []
        self.rows = 0
        self.parts: list[Path] = []

    def __enter__(self) -> ParquetParts:
        return self

    def __exit__(self, *exc_info) -> None:
        import shutil

        shutil.rmtree(self.parts_dir, ignore_errors=True)

    def add(self, frame: pl.DataFrame) -> None:
        self.frames.append(frame)
        self.rows += frame.height
        if self.rows >= self.part_rows:
            self.flush()

    def flush(self) -> None:
        import polars as pl

        from workflow_scripts.io_utils import system_errors_naming

        if self.frames:
            self.parts.append(self.parts_dir / f"part-{len(self.parts):06d}.parquet")
            with system_errors_naming(self.out):
                pl.concat(self.frames).write_parquet(self.parts[-1])
            self.frames, self.rows = [], 0

    def close(self) -> None:
        """Join the parts (or write the empty frame when there are none) into `out`."""
        import polars as pl

        from workflow_scripts.io_utils import atomic_path

        self.flush()
        with atomic_path(self.out) as tmp:
            if self.parts:
                pl.scan_parquet(self.parts).sink_parquet(tmp, metadata=self.metadata)
            else:
                self.empty.write_parquet(tmp, metadata=self.metadata)
