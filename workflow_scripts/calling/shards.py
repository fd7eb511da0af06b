"""The base model's regions split into shards of about equal work, one score_base_model job each.

Work is the nucleotides a region scores (its length, gaps between merged genes included). Regions
are dealt longest first, each to the shard with the least work so far (ties: the lower shard), so
no shard holds more than the mean plus one region; each shard keeps its regions in genome order.
The split depends only on the regions and the count, so every shard job plans the same split and
scores its own part, and every region is in exactly one shard. With more shards than regions the
extra shards are empty: their jobs write an empty scores table, which make_calls gathers as such.

Each shard job also writes a record beside its table (`<i>-of-<n>.regions.json`: its shard and
regions); the readers (calling/scores.py) refuse a table whose rows lie outside its record's
regions, naming the file and the regions it should hold (a shard copied over another).
"""

from __future__ import annotations

import heapq
import json
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from workflow_scripts.calling.regions import Region, plan_regions
from workflow_scripts.data.genome import Genome
from workflow_scripts.errors import InputError


def region_nt(region: Region) -> int:
    return region.end - region.start


def plan_shards(regions: list[Region], count: int) -> list[list[Region]]:
    """`count` lists of regions (some empty when count > len(regions)), balanced by nucleotides."""
    if count < 1:
        raise ValueError(f"shard count must be >= 1, got {count}")
    lightest = [(0, shard) for shard in range(count)]  # (nt so far, shard), a heap
    members: list[list[int]] = [[] for _ in range(count)]
    for index in sorted(range(len(regions)), key=lambda i: (-region_nt(regions[i]), i)):
        load, shard = heapq.heappop(lightest)
        members[shard].append(index)
        heapq.heappush(lightest, (load + region_nt(regions[index]), shard))
    return [[regions[i] for i in sorted(indices)] for indices in members]


def shard_nt(shard: list[Region]) -> int:
    return sum(region_nt(region) for region in shard)


# ---- the record a shard job writes beside its table, so readers can tell a table that holds
# another shard's rows (a file copied over another) from a good one ----
SHARD_NAME = re.compile(r"^(\d+)-of-(\d+)$")  # score_base_model's tables: <shard>-of-<shards>.parquet
RECORD_SUFFIX = ".regions.json"


@dataclass(frozen=True)
class ShardRecord:
    """Which shard a table is and the regions it scores (1-based, inclusive), from its record."""

    path: Path
    shard: int
    shards: int
    regions: tuple[tuple[str, str, int, int], ...]  # (chrom, strand, start, end)

    def shown(self, most: int = 3) -> str:
        """'chr1:1-1,000 (+), chr2:5-90 (-) and 4 more'."""
        spans = [f"{chrom}:{start:,}-{end:,} ({strand})" for chrom, strand, start, end in self.regions[:most]]
        more = len(self.regions) - most
        return ", ".join(spans) + (f" and {more:,} more" if more > 0 else "") if spans else "no region"


def record_path(scores_path: str | Path) -> Path:
    """The record beside a shard's table: 2-of-4.parquet -> 2-of-4.regions.json."""
    path = Path(scores_path)
    return path.with_name(path.name.removesuffix(".parquet") + RECORD_SUFFIX)


def shard_regions(genes: pl.DataFrame, genome: Genome, context: int, shard: int, shards: int) -> list[Region]:
    """The regions shard `shard` of `shards` scores: the genes merged less than one model context
    apart (regions.plan_regions, as calling/scoring.py plans them), dealt by plan_shards."""
    return plan_shards(plan_regions(genes, genome, merge_gap=context), shards)[shard - 1]


def shard_record(regions: list[Region], genome: Genome, shard: int, shards: int) -> dict:
    """What a shard job writes beside its table (write_json): its shard, and its regions 1-based."""
    spans = [[genome.names[r.chrom], "-" if r.minus else "+", r.start + 1, r.end] for r in regions]
    return {"shard": shard, "shards": shards, "regions": spans}


def read_shard_record(scores_path: str | Path) -> ShardRecord | None:
    """The record of a table named like a shard (<i>-of-<n>.parquet), None where there is none (a
    user's own table, or one written before records). A record of another shard than the name
    says, or one that does not read, is an InputError naming it."""
    named = SHARD_NAME.match(Path(scores_path).name.removesuffix(".parquet"))
    path = record_path(scores_path)
    if named is None or not path.is_file():
        return None
    try:
        values = json.loads(path.read_text())
        record = ShardRecord(
            path,
            int(values["shard"]),
            int(values["shards"]),
            tuple((str(c), str(s), int(a), int(b)) for c, s, a, b in values["regions"]),
        )
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as error:
        raise InputError(path, "regions", f"not a score_base_model shard record ({error!r})") from None
    expected = (int(named[1]), int(named[2]))
    if (record.shard, record.shards) != expected:
        raise InputError(
            path,
            "shard",
            f"records shard {record.shard} of {record.shards}, not {expected[0]} of {expected[1]} as its "
            "name says (a file copied over another): delete it and its table, and rerun to score them again",
        )
    return record


def check_rows_in_shard(frame: pl.DataFrame, record: ShardRecord, table: str | Path) -> None:
    """InputError at the first row (chrom, strand, position, ROW) outside the shard's regions
    (one searchsorted per strand: a shard's regions of one strand do not overlap)."""
    from workflow_scripts.data.tables import ROW

    chrom, strand, position = (frame[name].to_numpy() for name in ("chrom", "strand", "position"))
    outside = np.ones(frame.height, dtype=bool)
    for name, sign in frame.select("chrom", "strand").unique().iter_rows():
        spans = sorted((start, end) for c, s, start, end in record.regions if (c, s) == (name, sign))
        if not spans:
            continue  # every row of this strand is outside
        rows = (chrom == name) & (strand == sign)
        starts, ends = (np.array(values, dtype=np.int64) for values in zip(*spans))
        at = np.searchsorted(starts, position[rows], side="right") - 1
        outside[rows] = (at < 0) | (position[rows] > ends[np.maximum(at, 0)])
    if outside.any():
        first = int(np.argmax(outside))
        raise InputError(
            table,
            f"column 'position' row {frame[ROW][first]}",
            f"{chrom[first]}:{int(position[first]):,} ({strand[first]}) is not in shard {record.shard} of "
            f"{record.shards}, which scores {record.shown()} ({record.path.name}): this table holds another "
            "shard's rows; delete it and rerun to score it again",
        )
