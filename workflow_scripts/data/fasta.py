"""FASTA parsing and genome indexing.

`load_fasta` parses a plain, gzip or bgzip FASTA once into one concatenated upper-case uint8
array (a `Genome`); the index_genome rule saves it as `sequence.npy` + `index.tsv`, which every
experiment memory-maps (`Genome.open_cached`). Soft-masked bases are upper-cased; N is kept;
any other character is an error naming the chromosome and position. Also refused, naming the
record: a record without bases (its chromosome would be empty, and every call on it would look
like a bad position in the calls table), and line breaks made of a lone carriage return (old Mac
files: the whole file would read as one header line).
"""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path

import numpy as np

from workflow_scripts.data.genome import Genome
from workflow_scripts.errors import InputError

VALID_BASES = b"ACGTN"
# bytes.translate table: lower-case letters -> upper-case, everything else unchanged.
_UPPER_TABLE = bytes.maketrans(b"abcdefghijklmnopqrstuvwxyz", b"ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_LINE_BREAKS = b"\r\n"
IUPAC_CODES = b"RYSWKMBDHV"  # ambiguity codes other than N
_IUPAC_TO_N = bytes.maketrans(IUPAC_CODES, b"N" * len(IUPAC_CODES))


def read_raw_bytes(path: str | Path) -> bytes:
    """Whole file as bytes, gunzipped when gzip/bgzip (multi-member) compressed."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "FASTA", "file not found")
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as error:
            raise InputError(path, "FASTA", f"corrupt gzip data ({error})") from None
    if not raw.strip():
        raise InputError(path, "FASTA", "file is empty")
    return raw


def header_spans(raw: bytes, path) -> list[tuple[int, int]]:
    """(header_start, header_end) byte spans of every '>' line."""
    first = len(raw) - len(raw.lstrip())
    if raw[first : first + 1] != b">":
        raise InputError(path, "line 1", "no '>' header before sequence data; is this a FASTA file?")
    starts = [first] + [i + 1 for i in _find_all(raw, b"\n>", first)]
    spans = []
    for start in starts:
        end = raw.find(b"\n", start)
        spans.append((start, len(raw) if end < 0 else end))
    return spans


def _find_all(raw: bytes, needle: bytes, begin: int) -> list[int]:
    found, position = [], raw.find(needle, begin)
    while position >= 0:
        found.append(position)
        position = raw.find(needle, position + 1)
    return found


def refuse_lone_carriage_returns(raw: bytes, path) -> None:
    """InputError naming the record that holds the first CR not followed by LF (before the
    file's trailing blanks)."""
    end = len(raw)
    while end and raw[end - 1 : end] in (b"\r", b"\n", b" ", b"\t"):
        end -= 1
    if raw.count(b"\r", 0, end) == raw.count(b"\r\n", 0, end):
        return
    at = raw.find(b"\r")
    while raw[at + 1 : at + 2] == b"\n":
        at = raw.find(b"\r", at + 1)
    header = raw.rfind(b">", 0, at + 1)
    fields = raw[header + 1 : header + 1000].split(None, 1) if header >= 0 else []
    name = fields[0].decode("utf-8", errors="replace") if fields else ""
    raise InputError(
        path,
        f"record '{name}'" if name else "line 1",
        "lines end with a carriage return alone (old Mac line endings); convert them to "
        "newlines, e.g. tr '\\r' '\\n' < in.fa > out.fa",
    )


def parse_records(raw: bytes, path) -> tuple[list[str], list[bytes]]:
    refuse_lone_carriage_returns(raw, path)
    spans = header_spans(raw, path)
    names, chunks, seen = [], [], set()
    for i, (start, end) in enumerate(spans):
        fields = raw[start + 1 : end].split()
        if not fields:
            raise InputError(path, f"record {i + 1}", "header '>' has no sequence name")
        name = fields[0].decode("utf-8", errors="replace")
        if name in seen:
            raise InputError(path, f"chromosome '{name}'", "duplicate chromosome name")
        seen.add(name)
        body_end = spans[i + 1][0] if i + 1 < len(spans) else len(raw)
        names.append(name)
        chunks.append(raw[end:body_end].translate(_UPPER_TABLE, _LINE_BREAKS))
        if not chunks[-1].strip():
            raise InputError(path, f"record '{name}'", "empty record: no sequence lines after its header")
    return names, chunks


def iupac_to_n(chunks: list[bytes]) -> tuple[list[bytes], dict[str, int]]:
    """Turn every IUPAC ambiguity code (not N) into N; how many of each code there were."""
    counts = {chr(code): sum(chunk.count(bytes([code])) for chunk in chunks) for code in IUPAC_CODES}
    return [chunk.translate(_IUPAC_TO_N) for chunk in chunks], {code: n for code, n in counts.items() if n}


def check_bases(path, names: list[str], chunks: list[bytes]) -> None:
    """Raise on the first base outside ACGTN, naming chromosome and 1-based position."""
    for name, chunk in zip(names, chunks):
        if not chunk.translate(None, VALID_BASES):
            continue
        codes = np.frombuffer(chunk, dtype=np.uint8)
        valid = np.zeros(256, dtype=bool)
        valid[np.frombuffer(VALID_BASES, np.uint8)] = True
        bad = int(np.flatnonzero(~valid[codes])[0])
        char = chr(codes[bad])
        raise InputError(
            path,
            f"chromosome '{name}' position {bad + 1}",
            f"invalid character {char!r}; only A, C, G, T, N are allowed "
            "(to turn IUPAC codes into N, set index_genome: {iupac: to_n})",
        )


def load_fasta(path: str | Path) -> Genome:
    """Parse a FASTA (plain/gzip/bgzip) into a `Genome`; soft-masking is upper-cased."""
    return read_fasta(path, iupac="refuse")[0]


def read_fasta(path: str | Path, iupac: str) -> tuple[Genome, dict[str, int]]:
    """`load_fasta` with IUPAC codes refused (iupac "refuse") or turned into N ("to_n"); the
    second value counts the codes turned into N."""
    raw = read_raw_bytes(path)
    names, chunks = parse_records(raw, path)
    del raw
    converted: dict[str, int] = {}
    if iupac == "to_n":
        chunks, converted = iupac_to_n(chunks)
    check_bases(path, names, chunks)
    lengths = np.array([len(chunk) for chunk in chunks], dtype=np.int64)
    sequence = np.frombuffer(b"".join(chunks), dtype=np.uint8)
    return Genome(names, lengths, sequence), converted


def open_genome(path: str | Path) -> Genome:
    """A cached index directory (memory-mapped) or a FASTA file (parsed now)."""
    if not Path(path).exists():
        raise InputError(
            path, "genome", "not found; give a genome index directory (the index_genome rule) or a FASTA file"
        )
    return Genome.open_cached(path) if Path(path).is_dir() else load_fasta(path)
