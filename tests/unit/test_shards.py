"""Sharded base-model scoring: the shard plan (every region once, balance, determinism), shards
scored apart and gathered equal one pass, and make_calls reading several tables as one. The memory peaks on 4.8 M positions:
tests/workflow/test_shards.py."""

from __future__ import annotations

import re

import numpy as np
import polars as pl
import pytest

from tests.unit.test_calls import Toy
from tests.unit.test_scoring import GENES, settings
from workflow_scripts.calling.regions import Region, plan_regions
from workflow_scripts.calling.scores import read_scores
from workflow_scripts.calling.scoring import score_genes
from workflow_scripts.calling.shards import plan_shards, region_nt, shard_nt
from workflow_scripts.calling.spliceai import load_ensemble
from workflow_scripts.command_line import path_flags
from workflow_scripts.errors import InputError
from workflow_scripts.rules import score_base_model

pytest_plugins = ["tests.unit.test_scoring"]  # its genome and weights fixtures


def random_regions(rng, n: int) -> list[Region]:
    """Regions of heavy-tailed lengths (a few long genes among many short), in genome order."""
    lengths = np.minimum(rng.lognormal(8, 1.5, n).astype(int) + 1, 2_000_000)
    regions, start = [], 0
    for index, length in enumerate(lengths):
        regions.append(Region(index % 3, bool(index % 2), start, start + int(length), (index,)))
        start += int(length) + 100
    return regions


@pytest.mark.parametrize("n_regions,count", [(1, 1), (50, 1), (50, 4), (500, 7), (200, 64), (3, 8)])
def test_every_region_in_one_shard_balanced_in_genome_order(n_regions, count):
    regions = random_regions(np.random.default_rng(n_regions + count), n_regions)
    shards = plan_shards(regions, count)
    assert len(shards) == count
    placed = [region for shard in shards for region in shard]
    assert sorted(placed, key=regions.index) == regions  # each region exactly once
    for shard in shards:
        assert shard == sorted(shard, key=regions.index)  # genome order within a shard
    loads = [shard_nt(shard) for shard in shards]
    mean = sum(loads) / count
    assert max(loads) <= mean + max(map(region_nt, regions))
    if count > n_regions:
        assert sum(1 for shard in shards if not shard) == count - n_regions
    assert plan_shards(list(regions), count) == shards  # the same plan in every job


def test_longest_first_beats_the_genome_order_split():
    """One long region and many short ones: the long one gets a shard to itself."""
    regions = [Region(0, False, 0, 1000, (0,))] + [
        Region(0, False, 2000 + 100 * i, 2050 + 100 * i, (i + 1,)) for i in range(20)
    ]
    shards = plan_shards(regions, 2)
    assert sorted(map(shard_nt, shards)) == [1000, 1000]


def test_shard_count_below_one_is_refused():
    with pytest.raises(ValueError):
        plan_shards([], 0)


@pytest.mark.parametrize("count,batch_size", [(2, 1), (3, 1), (9, 1), (3, 4)])
def test_shards_scored_apart_gather_to_the_unsharded_scores(tmp_path, genome, weights, count, batch_size):
    """Every shard scored on its own (9 > 5 regions: empty shards write an empty table) and
    concatenated: the same rows as one pass, the same numbers bit for bit with one chunk per
    forward pass; with several, a chunk's place in its batch moves the CPU's float32 rounding
    (about 1e-7) and nothing more."""
    ensemble = load_ensemble(weights)
    whole = tmp_path / "whole.parquet"
    run = settings(batch_size=batch_size)
    score_genes(ensemble, genome, GENES, whole, run, progress_every_s=1e9)
    parts = []
    for shard in range(1, count + 1):
        out = tmp_path / f"{shard}-of-{count}.parquet"
        summary = score_genes(ensemble, genome, GENES, out, run, 1e9, shard=(shard, count))
        parts.append(pl.read_parquet(out))
        assert summary["nt"] == parts[-1].height
    assert len(plan_regions(GENES, genome, ensemble.context)) == 5
    assert sum(part.height == 0 for part in parts) == max(count - 5, 0)
    order = ["gene_id", "position"]
    gathered, expected = pl.concat(parts).sort(order), pl.read_parquet(whole).sort(order)
    assert gathered.drop("donor", "acceptor").equals(expected.drop("donor", "acceptor"))
    tolerance = 0 if batch_size == 1 else 1e-6
    for column in ("donor", "acceptor"):
        np.testing.assert_allclose(gathered[column], expected[column], rtol=0, atol=tolerance)


def test_shard_entry_point_logs_shard_and_time_left(tmp_path, genome, weights, capsys):
    genome.save_cached(tmp_path / "genome")
    GENES.write_parquet(tmp_path / "genes.parquet")
    config = '{"calling": {"base_model": {"batch_size": 4, "chunk_length": 50, "device": "cpu"}}}'
    argv = path_flags(
        {"genes": tmp_path / "genes.parquet", "weights": weights}, {"scores": tmp_path / "2-of-3.parquet"}
    )
    argv += ["--genome", str(tmp_path / "genome"), "--config", config]
    score_base_model.main([*argv, "--shard", "2", "--shards", "3"])
    log = capsys.readouterr().err
    assert "score_base_model shard 2 of 3: " in log and "score_base_model shard 2 of 3 done: " in log
    assert re.search(
        r"shard 2 of 3 done: 100.0% \(([\d,]+)/\1 nt scored, (\d+)/\2 genes\), [\d,]+ nt/s in ", log
    )
    with pytest.raises(InputError, match="--shard: 4: not a shard of 1..3"):
        score_base_model.main([*argv, "--shard", "4", "--shards", "3"])


def split_by_gene(scores: pl.DataFrame, genes: list[list[str]]) -> list[pl.DataFrame]:
    return [scores.filter(pl.col("gene_id").is_in(ids)) for ids in genes]


def test_several_tables_read_as_one(tmp_path):
    """Gene gA and gB overlap on '+': their shared positions lie in two tables, one score."""
    toy = Toy(np.random.default_rng(4))
    one = tmp_path / "one.parquet"
    toy.scores.write_parquet(one)
    paths = []
    for index, part in enumerate(split_by_gene(toy.scores, [["gA", "gD"], ["gB"], ["gC"], []])):
        paths.append(tmp_path / f"{index + 1}-of-4.parquet")
        part.write_parquet(paths[-1])
    whole, whole_report = read_scores(one, toy.genes, toy.genome.chrom_lengths())
    gathered, report = read_scores(paths, toy.genes, toy.genome.chrom_lengths())
    for name in ("keys", "donor", "acceptor"):
        np.testing.assert_array_equal(getattr(gathered, name), getattr(whole, name))
    assert report == {**whole_report, "score_tables": 4}


def test_one_position_scored_differently_in_two_tables_is_one_line(tmp_path):
    """The error names the position's first row (here in the first table), as in one table."""
    toy = Toy(np.random.default_rng(4))
    first, second = split_by_gene(toy.scores, [["gA", "gC", "gD"], ["gB"]])
    shared = pl.col("position") == second["position"].min()
    second = second.with_columns(pl.when(shared).then(0.999).otherwise("donor").alias("donor"))
    paths = [tmp_path / "1.parquet", tmp_path / "2.parquet"]
    first.write_parquet(paths[0])
    second.write_parquet(paths[1])
    with pytest.raises(InputError) as caught:
        read_scores(paths, toy.genes, toy.genome.chrom_lengths())
    assert caught.value.source == str(paths[0]) and caught.value.field.startswith("column 'position' row ")
    assert "scored twice with different donor/acceptor values" in caught.value.message
