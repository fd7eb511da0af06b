"""The genome as one memory-mapped array, and vectorised window extraction.

A `Genome` holds every chromosome in one upper-case uint8 array plus each one's name, offset
and length. The index_genome rule saves it (`save_cached`: `sequence.npy` + `index.tsv`, see
workflow_scripts.data.fasta for the parsing); every experiment maps it with `open_cached`.
Windows are cut with one fixed-width read per row; minus-strand windows are reverse-complemented.
`centred_windows` cuts windows of one length around sites and writes N wherever a window reaches
past its chromosome (or past any bounds given), so the site always sits at the centre.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

from workflow_scripts.data.tables import read_table
from workflow_scripts.errors import InputError
from workflow_scripts.io_utils import atomic_path, write_text

SEQUENCE_FILE = "sequence.npy"
INDEX_FILE = "index.tsv"
INDEX_SCHEMA = pl.Schema({"name": pl.String, "length": pl.Int64, "offset": pl.Int64})

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

    def chrom_lengths(self) -> dict[str, int]:
        return dict(zip(self.names, self.lengths.tolist()))

    def chromosome(self, name: str) -> str:
        """One chromosome's sequence as a str (for tests and debugging)."""
        i = self.index_of[name]
        start = self.offsets[i]
        return bytes(self.sequence[start : start + self.lengths[i]]).decode("ascii")

    def index_frame(self) -> pl.DataFrame:
        return pl.DataFrame(
            {"name": self.names, "length": self.lengths, "offset": self.offsets},
            schema=INDEX_SCHEMA,
        )

    def save(self, sequence_path: str | Path, index_path: str | Path) -> None:
        """Write the sequence (.npy), then the index last (its presence marks a complete cache)."""
        with atomic_path(sequence_path) as tmp:
            with open(tmp, "wb") as handle:
                np.save(handle, np.ascontiguousarray(self.sequence))
        write_text(index_path, self.index_frame().write_csv(separator="\t"))

    def save_cached(self, out_dir: str | Path) -> None:
        """`save` into a genome index directory, under the names `open_cached` reads."""
        self.save(Path(out_dir) / SEQUENCE_FILE, Path(out_dir) / INDEX_FILE)

    @classmethod
    def open_cached(cls, cache_dir: str | Path) -> Genome:
        cache_dir = Path(cache_dir)
        index_path, sequence_path = cache_dir / INDEX_FILE, cache_dir / SEQUENCE_FILE
        for path in (index_path, sequence_path):
            if not path.is_file():
                raise InputError(path, "genome index", "file not found; run the index_genome rule first")
        index = read_table(index_path, required=list(INDEX_SCHEMA)).cast(INDEX_SCHEMA)
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
        chrom_idx, starts, ends, minus_strand = (
            np.asarray(a) for a in (chrom_idx, starts, ends, minus_strand)
        )
        parts = []
        for begin in range(0, max(len(starts), 1), chunk_size):
            piece = slice(begin, begin + chunk_size)
            rows, _ = self.gather_rows(chrom_idx[piece], starts[piece], ends[piece], minus_strand[piece])
            parts.append(rows_to_strings(rows))
        return pl.concat(parts).alias("sequence")

    def centred_windows(
        self, chrom_idx, centres, flank: int, low, high, minus_strand, chunk_size: int = 1 << 17
    ) -> pl.Series:
        """Windows of 2*flank+1 nt around 0-based `centres`, in the strand's reading direction
        (the site at index flank); bases outside [low, high) (0-based, per row, within the
        chromosome) are N. A polars String Series, built chunk by chunk to bound memory."""
        chrom_idx, centres, low, high, minus_strand = (
            np.asarray(a) for a in (chrom_idx, centres, low, high, minus_strand)
        )
        parts = []
        for begin in range(0, max(len(centres), 1), chunk_size):
            piece = slice(begin, begin + chunk_size)
            starts, ends = centres[piece] - flank, centres[piece] + flank + 1
            rows, _ = self.gather_rows(chrom_idx[piece], starts, ends, minus_strand[piece])
            mask_outside(rows, low[piece] - starts, ends - high[piece], minus_strand[piece])
            parts.append(rows_to_strings(rows))
        return pl.concat(parts).alias("sequence")


def mask_outside(rows: np.ndarray, before: np.ndarray, after: np.ndarray, minus: np.ndarray) -> None:
    """Write N (in place) over the first `before` and last `after` genomic positions of each row;
    minus rows run backwards, so there they are the row's last and first bases."""
    width = rows.shape[1]
    before, after = np.clip(before, 0, width), np.clip(after, 0, width)
    edge = np.flatnonzero((before > 0) | (after > 0))
    if len(edge) == 0:
        return
    lead = np.where(minus[edge], after[edge], before[edge])[:, None]
    trail = np.where(minus[edge], before[edge], after[edge])[:, None]
    columns = np.arange(width)
    outside = (columns < lead) | (columns >= width - trail)
    rows[edge] = np.where(outside, ord("N"), rows[edge])


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
