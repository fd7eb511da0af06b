"""Genome loading, caching and vectorised window extraction.

`load_fasta` parses a plain, gzip or bgzip FASTA once into one concatenated
upper-case uint8 array; the CLI caches it as `sequence.npy` + `index.tsv` so
every experiment can memory-map it with `Genome.open_cached`.
"""

from __future__ import annotations

import argparse
import gzip
import sys
import time
import zlib
from pathlib import Path

import numpy as np
import polars as pl

from workflow_scripts.errors import InputError, run_cli
from workflow_scripts.io_utils import atomic_path, write_text

SEQUENCE_FILE = "sequence.npy"
INDEX_FILE = "index.tsv"
VALID_BASES = b"ACGTN"

# bytes.translate table: lower-case letters -> upper-case, everything else unchanged.
_UPPER_TABLE = bytes.maketrans(
    b"abcdefghijklmnopqrstuvwxyz", b"ABCDEFGHIJKLMNOPQRSTUVWXYZ"
)
_LINE_BREAKS = b"\r\n"

COMPLEMENT = np.arange(256, dtype=np.uint8)
COMPLEMENT[np.frombuffer(b"ACGTN", np.uint8)] = np.frombuffer(b"TGCAN", np.uint8)
_COMPLEMENT_TABLE = COMPLEMENT.tobytes()


class Genome:
    """All chromosomes as one uint8 array plus per-chromosome name/offset/length."""

    def __init__(self, names: list[str], lengths: np.ndarray, sequence: np.ndarray):
        self.names = list(names)
        self.lengths = np.asarray(lengths, dtype=np.int64)
        self.offsets = np.concatenate([[0], np.cumsum(self.lengths)[:-1]]).astype(np.int64)
        self.sequence = sequence
        self.index_of = {name: i for i, name in enumerate(self.names)}

    def __len__(self) -> int:
        return len(self.names)

    def chromosome(self, name: str) -> str:
        """One chromosome's sequence as a str (for tests and debugging)."""
        i = self.index_of[name]
        start = self.offsets[i]
        return bytes(self.sequence[start : start + self.lengths[i]]).decode("ascii")

    def index_frame(self) -> pl.DataFrame:
        return pl.DataFrame(
            {"name": self.names, "length": self.lengths, "offset": self.offsets},
            schema={"name": pl.String, "length": pl.Int64, "offset": pl.Int64},
        )

    def save_cached(self, out_dir: str | Path) -> None:
        """Write sequence.npy, then index.tsv last (its presence marks a complete cache)."""
        out_dir = Path(out_dir)
        with atomic_path(out_dir / SEQUENCE_FILE) as tmp:
            with open(tmp, "wb") as handle:
                np.save(handle, np.ascontiguousarray(self.sequence))
        write_text(out_dir / INDEX_FILE, self.index_frame().write_csv(separator="\t"))

    @classmethod
    def open_cached(cls, cache_dir: str | Path) -> "Genome":
        cache_dir = Path(cache_dir)
        index_path, sequence_path = cache_dir / INDEX_FILE, cache_dir / SEQUENCE_FILE
        for path in (index_path, sequence_path):
            if not path.is_file():
                raise InputError(path, "genome index", "file not found; run `python -m workflow_scripts.data.genome` first")
        index = pl.read_csv(index_path, separator="\t", schema={"name": pl.String, "length": pl.Int64, "offset": pl.Int64})
        sequence = np.load(sequence_path, mmap_mode="r")
        if int(index["length"].sum()) != sequence.shape[0]:
            raise InputError(sequence_path, "length", "does not match index.tsv; rebuild the genome index")
        return cls(index["name"].to_list(), index["length"].to_numpy(), sequence)

    def gather_windows(self, chrom_idx, starts, ends, minus_strand) -> tuple[np.ndarray, np.ndarray]:
        """Extract windows [start, end) (0-based, already clipped) with no per-row loop.

        Minus-strand windows come back reverse-complemented. Returns the flat
        bytes of all windows and their offsets (len(windows) + 1 entries).
        """
        rows, lengths = self.gather_rows(chrom_idx, starts, ends, minus_strand)
        offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        return flatten_rows(rows, lengths), offsets

    def gather_rows(self, chrom_idx, starts, ends, minus_strand) -> tuple[np.ndarray, np.ndarray]:
        """Windows as a zero-padded (n, max_length) uint8 matrix plus their lengths."""
        offsets = self.offsets[np.asarray(chrom_idx, dtype=np.int64)]
        starts = offsets + np.asarray(starts, dtype=np.int64)
        ends = offsets + np.asarray(ends, dtype=np.int64)
        return gather_padded_rows(self.sequence, starts, ends, np.asarray(minus_strand, dtype=bool))

    def window_strings(self, chrom_idx, starts, ends, minus_strand, chunk_size: int = 1 << 17) -> pl.Series:
        """Windows as a polars String Series, built chunk by chunk to bound memory."""
        chrom_idx, starts, ends, minus_strand = (np.asarray(a) for a in (chrom_idx, starts, ends, minus_strand))
        parts = []
        for begin in range(0, max(len(starts), 1), chunk_size):
            piece = slice(begin, begin + chunk_size)
            rows, _ = self.gather_rows(chrom_idx[piece], starts[piece], ends[piece], minus_strand[piece])
            parts.append(rows_to_strings(rows))
        return pl.concat(parts).alias("sequence")


def gather_padded_rows(sequence: np.ndarray, starts: np.ndarray, ends: np.ndarray, minus: np.ndarray):
    """Copy each window into a row (one memcpy per row); minus rows reverse-complemented.

    Rows are left-aligned and zero-padded to the longest window. Every row is one
    fixed-width read: [start, start+width) for plus rows, [end-width, end) for minus
    rows, which are then reversed and complemented in bulk. Reads that would leave
    the genome go through a slower path.
    """
    lengths = ends - starts
    width = int(lengths.max()) if len(lengths) else 0
    if width == 0:
        return np.zeros((len(starts), 0), dtype=np.uint8), lengths
    first = np.where(minus, ends - width, starts)
    inside = (first >= 0) & (first + width <= sequence.shape[0])
    windows = fixed_width_view(sequence, width)
    if inside.all():
        packed = windows[first]  # 1-D array of width-byte items: a memcpy per row
    else:
        packed = np.zeros(len(starts), dtype=windows.dtype)
        packed[inside] = windows[first[inside]]
    rows = packed.view(np.uint8).reshape(len(starts), width)
    flip = np.flatnonzero(minus & inside)
    if len(flip):
        rows[flip] = reverse_complement_rows(packed[flip[::-1]], width)
    edge = np.flatnonzero(~inside)
    if len(edge):
        rows[edge] = gather_edge_rows(sequence, starts[edge], ends[edge], minus[edge], width)
    short = np.flatnonzero(lengths < width)
    if len(short):
        rows[short] *= np.arange(width) < lengths[short, None]
    return rows, lengths


def flatten_rows(rows: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Concatenate each row's first `length` bytes; full rows are copied in contiguous runs."""
    short = np.flatnonzero(lengths < rows.shape[1])
    if len(short) == 0:
        return rows.ravel()
    if len(short) > len(rows) // 8:  # mostly short rows: one boolean compress
        return rows[np.arange(rows.shape[1]) < lengths[:, None]]
    pieces, begin = [], 0
    for row in short.tolist():
        pieces += [rows[begin:row].ravel(), rows[row, : lengths[row]]]
        begin = row + 1
    pieces.append(rows[begin:].ravel())
    return np.concatenate(pieces)


def fixed_width_view(sequence: np.ndarray, width: int) -> np.ndarray:
    """Every `width`-byte read of `sequence` as one item (no copy): view[i] = sequence[i:i+width]."""
    sequence = np.ascontiguousarray(sequence)
    count = max(sequence.shape[0] - width + 1, 0)
    return np.ndarray((count,), dtype=np.dtype((np.void, width)), buffer=sequence, strides=(1,))


def reverse_complement_rows(packed_reversed: np.ndarray, width: int) -> np.ndarray:
    """Reverse-complement rows given in reverse row order: reversing all bytes at once
    restores the row order and reverses every row."""
    complemented = np.ascontiguousarray(packed_reversed).tobytes().translate(_COMPLEMENT_TABLE)
    return np.frombuffer(complemented, dtype=np.uint8)[::-1].reshape(len(packed_reversed), width)


def complement_rows(rows: np.ndarray) -> np.ndarray:
    flat = np.ascontiguousarray(rows).tobytes().translate(_COMPLEMENT_TABLE)
    return np.frombuffer(flat, dtype=np.uint8).reshape(rows.shape)


def gather_edge_rows(sequence, starts, ends, minus, width):
    """Broadcast-index gather for the few windows near the genome ends."""
    steps = np.arange(width)
    index = np.where(minus[:, None], ends[:, None] - 1 - steps, starts[:, None] + steps)
    rows = sequence[np.clip(index, 0, sequence.shape[0] - 1)]
    rows[minus] = COMPLEMENT[rows[minus]]
    return rows


def rows_to_strings(rows: np.ndarray) -> pl.Series:
    """Zero-padded rows -> String Series (numpy 'S' strings drop trailing NULs)."""
    if rows.shape[1] == 0:
        return pl.Series("sequence", [""] * rows.shape[0], dtype=pl.String)
    fixed = np.ascontiguousarray(rows).view(f"S{rows.shape[1]}").ravel()
    return pl.Series("sequence", fixed).cast(pl.String)


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


def parse_records(raw: bytes, path) -> tuple[list[str], list[bytes]]:
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
    return names, chunks


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
            path, f"chromosome '{name}' position {bad + 1}",
            f"invalid character {char!r}; only A, C, G, T, N are allowed (IUPAC codes must be converted to N)",
        )


def load_fasta(path: str | Path) -> Genome:
    """Parse a FASTA (plain/gzip/bgzip) into a `Genome`; soft-masking is upper-cased."""
    raw = read_raw_bytes(path)
    names, chunks = parse_records(raw, path)
    del raw
    check_bases(path, names, chunks)
    lengths = np.array([len(chunk) for chunk in chunks], dtype=np.int64)
    sequence = np.frombuffer(b"".join(chunks), dtype=np.uint8)
    return Genome(names, lengths, sequence)


def open_genome(path: str | Path) -> Genome:
    """A cached index directory (memory-mapped) or a FASTA file (parsed now)."""
    if not Path(path).exists():
        raise InputError(path, "genome", "not found; give a directory made by `python -m workflow_scripts.data.genome` or a FASTA file")
    return Genome.open_cached(path) if Path(path).is_dir() else load_fasta(path)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Index a genome FASTA into sequence.npy + index.tsv.")
    parser.add_argument("--fasta", required=True, help="plain, gzip or bgzip FASTA")
    parser.add_argument("--out-dir", required=True, help="directory for sequence.npy and index.tsv")
    args = parser.parse_args(argv)
    began = time.perf_counter()
    genome = load_fasta(args.fasta)
    genome.save_cached(args.out_dir)
    print(
        f"genome: {len(genome)} chromosomes, {int(genome.lengths.sum()):,} bases indexed in "
        f"{time.perf_counter() - began:.2f} s -> {args.out_dir}",
        file=sys.stderr,
    )


if __name__ == "__main__":
    run_cli(main)
