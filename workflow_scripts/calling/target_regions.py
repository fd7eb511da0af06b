"""What to score without an annotation (calling.start regions): a BED of regions, or every
chromosome of the genome, as a table of spans shaped like genes.parquet, so score_base_model,
its shards and the site candidates read it as they read genes.

BED (plain or gzip; `track`, `browser` and `#` lines skipped): chrom, start (0-based), end, and
optionally name, score and strand. A strand of `+` or `-` scores that strand only; `.` or no
strand column scores both. Intervals of one chromosome and strand that overlap or touch are
merged (a position is scored once), then cut into tiles of at most MAX_REGION nt, so shards
balance as they do on genes (calling/shards.py). Each row: gene_id `chrom:start-end:strand`
(1-based, inclusive), chrom, start, end, strand, biotype `region`. BED names are not kept: two
named intervals that overlap are one region.
"""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path

import polars as pl

from workflow_scripts.calling.contract import GENE_COLUMNS
from workflow_scripts.calling.regions import MAX_REGION
from workflow_scripts.data.call_table import chrom_hint
from workflow_scripts.data.genome import Genome
from workflow_scripts.errors import InputError

BIOTYPE = "region"
STRANDS = ("+", "-")
SKIPPED_PREFIXES = ("track", "browser", "#")
Interval = tuple[str, int, int, str]  # chrom, start (0-based), end (exclusive), strand


def bed_lines(path: str | Path):
    """(line number, columns) of every interval line."""
    path = Path(path)
    try:
        with open(path, "rb") as handle:
            compressed = handle.read(2) == b"\x1f\x8b"
        with (gzip.open if compressed else open)(path, "rb") as handle:
            for number, raw in enumerate(handle, start=1):
                try:
                    line = raw.decode("utf-8").rstrip("\r\n")
                except UnicodeDecodeError:
                    raise InputError(path, f"line {number}", "not UTF-8 text") from None
                if not line.strip() or line.startswith(SKIPPED_PREFIXES):
                    continue
                columns = line.split("\t")
                yield number, columns if len(columns) >= 3 else line.split()
    except (OSError, EOFError, zlib.error) as error:
        raise InputError(path, "calling.regions", f"cannot be read ({error})") from None


def whole_number(path: Path, number: int, column: str, text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise InputError(path, f"line {number} {column}", f"{text!r} is not a whole number") from None


def read_bed(path: str | Path, genome: Genome) -> list[Interval]:
    """The BED's intervals, each strand it asks for its own; the first bad line is one error."""
    path, lengths, intervals = Path(path), genome.chrom_lengths(), []
    for number, columns in bed_lines(path):
        if len(columns) < 3:
            raise InputError(
                path, f"line {number}", f"expected chrom, start and end, found {len(columns)} column"
            )
        chrom = columns[0]
        if chrom not in lengths:
            raise InputError(
                path, f"line {number} chrom", f"'{chrom}' not in genome{chrom_hint(chrom, genome)}"
            )
        start = whole_number(path, number, "start", columns[1])
        end = whole_number(path, number, "end", columns[2])
        if start < 0 or end <= start:
            raise InputError(
                path, f"line {number}", f"start {start}, end {end}: want 0 <= start < end (0-based)"
            )
        if end > lengths[chrom]:
            raise InputError(
                path, f"line {number} end", f"{end} is past the end of '{chrom}' ({lengths[chrom]:,} nt)"
            )
        strand = columns[5] if len(columns) >= 6 else "."
        if strand not in (*STRANDS, "."):
            raise InputError(path, f"line {number} strand", f"{strand!r}: want +, - or .")
        intervals += [(chrom, start, end, s) for s in (STRANDS if strand == "." else (strand,))]
    if not intervals:
        raise InputError(path, "calling.regions", "no intervals: nothing to score")
    return intervals


def whole_chromosomes(genome: Genome) -> list[Interval]:
    return [
        (chrom, 0, length, strand) for chrom, length in genome.chrom_lengths().items() for strand in STRANDS
    ]


def merged(intervals: list[Interval], genome: Genome) -> list[Interval]:
    """Overlapping or touching intervals of one chromosome and strand as one, in genome order."""
    order = sorted(intervals, key=lambda i: (genome.index_of[i[0]], i[3], i[1], i[2]))
    joined: list[Interval] = []
    for chrom, start, end, strand in order:
        last = joined[-1] if joined else None
        if last is not None and (last[0], last[3]) == (chrom, strand) and start <= last[2]:
            joined[-1] = (chrom, last[1], max(end, last[2]), strand)
        else:
            joined.append((chrom, start, end, strand))
    return joined


def tiles(interval: Interval, length: int) -> list[Interval]:
    """The interval cut into the fewest pieces of at most `length` nt, all but the last full."""
    chrom, start, end, strand = interval
    return [(chrom, s, min(s + length, end), strand) for s in range(start, end, length)]


def region_table(intervals: list[Interval], genome: Genome, tile: int = MAX_REGION) -> pl.DataFrame:
    """The spans to score, shaped like genes.parquet (GENE_COLUMNS; start, end 1-based inclusive)."""
    rows = [piece for interval in merged(intervals, genome) for piece in tiles(interval, tile)]
    return pl.DataFrame(
        {
            "gene_id": [f"{chrom}:{start + 1}-{end}:{strand}" for chrom, start, end, strand in rows],
            "chrom": [row[0] for row in rows],
            "start": [row[1] + 1 for row in rows],
            "end": [row[2] for row in rows],
            "strand": [row[3] for row in rows],
            "biotype": BIOTYPE,
        },
        schema={name: (pl.Int64 if name in ("start", "end") else pl.String) for name in GENE_COLUMNS},
    )


def target_regions(bed: str | None, genome: Genome) -> pl.DataFrame:
    """The BED's regions, or the whole genome on both strands when there is no BED."""
    return region_table(read_bed(bed, genome) if bed else whole_chromosomes(genome), genome)
