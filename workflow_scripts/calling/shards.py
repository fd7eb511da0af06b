"""The base model's regions split into shards of about equal work, one score_base_model job each.

Work is the nucleotides a region scores (its length, gaps between merged genes included). Regions
are dealt longest first, each to the shard with the least work so far (ties: the lower shard), so
no shard holds more than the mean plus one region; each shard keeps its regions in genome order.
The split depends only on the regions and the count, so every shard job plans the same split and
scores its own part, and every region is in exactly one shard. With more shards than regions the
extra shards are empty: their jobs write an empty scores table, which make_calls gathers as such.
"""

from __future__ import annotations

import heapq

from workflow_scripts.calling.regions import Region


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
