"""Pre-flight checks of the input files, run while the workflow is parsed (before any job runs).

A typo in a path, an empty file, a calls table without a required column or a genome that is
not a FASTA fails in seconds with one line naming the file and the config key, not after the
genome was indexed. Only cheap checks: the file exists, is readable and non-empty, a FASTA's
first bytes (gunzipped) are a '>' header, a table's header has the required columns. The full
checks run in the rules that read the files (genome.py, extract.py).

Relative paths under results/ are the workflow's own outputs (the demo data): skipped.
"""

from __future__ import annotations

import gzip
import os
import zlib
from pathlib import Path

from workflow_scripts.errors import InputError

GZIP_MAGIC = b"\x1f\x8b"
PEEK_BYTES = 1 << 16
CALL_COLUMNS = ("gene_id", "chrom", "position", "strand", "splice_type", "pred_type")
SEQUENCE_COLUMNS = ("sequence", "label")
TABLE_KINDS = (".tsv", ".txt", ".csv", ".parquet", ".pq")


def check_input_files(config: dict) -> None:
    """Raise InputError for the first unusable input named by a validated config."""
    if "genome" in config and is_user_file(config["genome"]):
        check_fasta(config["genome"], "genome")
    for key, columns in (("calls", CALL_COLUMNS), ("sequences", SEQUENCE_COLUMNS)):
        if key in config and is_user_file(config[key]):
            check_table(config[key], key, columns)
    deepspeed_json = config.get("train", {}).get("deepspeed_config")
    if deepspeed_json and is_user_file(deepspeed_json):
        check_readable_file(deepspeed_json, "train.deepspeed_config")


def is_user_file(path: str) -> bool:
    """False for the workflow's own outputs (relative paths under results/)."""
    parts = Path(path).parts
    return not (parts and parts[0] == "results")


def check_readable_file(path: str, key: str) -> None:
    target = Path(path)
    if not target.exists():
        raise InputError(path, key, f"file not found (relative paths start at {Path.cwd()})")
    if not target.is_file():
        raise InputError(path, key, "not a regular file")
    if not os.access(target, os.R_OK):
        raise InputError(path, key, "not readable (check its permissions)")
    if target.stat().st_size == 0:
        raise InputError(path, key, "file is empty")


def peek(path: str, key: str) -> bytes:
    """The first bytes of a file, gunzipped when it starts with the gzip magic."""
    with open(path, "rb") as handle:
        head = handle.read(PEEK_BYTES)
    if not head.startswith(GZIP_MAGIC):
        return head
    try:
        return zlib.decompressobj(wbits=31).decompress(head, PEEK_BYTES)
    except zlib.error as error:
        raise InputError(path, key, f"corrupt gzip data ({error})") from None


def check_fasta(path: str, key: str) -> None:
    check_readable_file(path, key)
    head = peek(path, key).lstrip()
    if not head:
        raise InputError(path, key, "file is empty")
    if not head.startswith(b">"):
        raise InputError(path, key, "no '>' header before sequence data; is this a FASTA file?")


def table_kind(path: str) -> str:
    suffixes = [s.lower() for s in Path(path).suffixes if s.lower() != ".gz"]
    return suffixes[-1] if suffixes else ""


def check_table(path: str, key: str, required: tuple[str, ...]) -> None:
    check_readable_file(path, key)
    kind = table_kind(path)
    if kind not in TABLE_KINDS:
        raise InputError(path, key, "unknown table format; use .tsv, .tsv.gz, .txt, .csv or .parquet")
    columns = parquet_columns(path, key) if kind in (".parquet", ".pq") else header_columns(path, key, kind)
    missing = [name for name in required if name not in columns]
    if missing:
        raise InputError(path, f"column '{missing[0]}'",
                         f"required column missing (found: {', '.join(columns) or 'none'})")


def header_columns(path: str, key: str, kind: str) -> list[str]:
    opener = gzip.open if peek_magic(path) else open
    try:
        with opener(path, "rt", encoding="utf-8", newline="") as handle:
            line = handle.readline()
    except (OSError, EOFError, UnicodeDecodeError, zlib.error) as error:
        raise InputError(path, key, f"cannot be read as text ({error})") from None
    separator = "," if kind == ".csv" else "\t"
    return [name.strip().strip('"') for name in line.rstrip("\r\n").split(separator) if name.strip()]


def peek_magic(path: str) -> bool:
    with open(path, "rb") as handle:
        return handle.read(2) == GZIP_MAGIC


def parquet_columns(path: str, key: str) -> list[str]:
    import polars as pl

    try:
        return list(pl.read_parquet_schema(path))
    except (OSError, pl.exceptions.PolarsError) as error:
        raise InputError(path, key, f"cannot be read as parquet ({str(error).splitlines()[0]})") from None
