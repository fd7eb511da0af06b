"""Each score_base_model shard writes a record of its regions beside its table; the readers refuse
a table that holds another shard's rows (a file copied over another), naming the file and the
regions it should hold, where they used to advise "score both strands"."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

from tests.unit.test_calls import Toy
from tests.unit.test_scoring import GENES
from workflow_scripts.calling.regions import plan_regions
from workflow_scripts.calling.scores import read_scores
from workflow_scripts.calling.shards import plan_shards, record_path
from workflow_scripts.calling.spliceai import load_ensemble
from workflow_scripts.command_line import path_flags
from workflow_scripts.errors import InputError
from workflow_scripts.rules import score_base_model

pytest_plugins = ["tests.unit.test_scoring"]  # its genome and weights fixtures

SHARD_GENES = (["gA", "gB"], ["gC", "gD"])  # shard 1: c1 +; shard 2: c1 - and c2 -


def write_shards(folder, toy: Toy) -> list:
    """Two shard tables of the toy's scores, split by gene, each with its record (the genes' spans
    as the shard's regions)."""
    paths = []
    for index, genes in enumerate(SHARD_GENES, start=1):
        path = folder / f"{index}-of-2.parquet"
        toy.scores.filter(pl.col("gene_id").is_in(genes)).write_parquet(path)
        spans = toy.genes.filter(pl.col("gene_id").is_in(genes)).select("chrom", "strand", "start", "end")
        record = {"shard": index, "shards": 2, "regions": [list(row) for row in spans.iter_rows()]}
        record_path(path).write_text(json.dumps(record))
        paths.append(path)
    return paths


def read(paths, toy: Toy):
    return read_scores(paths, toy.genes, toy.genome.chrom_lengths())


def test_shards_with_their_records_read_as_before(tmp_path):
    toy = Toy(np.random.default_rng(4))
    toy.scores.write_parquet(tmp_path / "one.parquet")
    gathered, _ = read(write_shards(tmp_path, toy), toy)
    whole, _ = read(tmp_path / "one.parquet", toy)
    np.testing.assert_array_equal(gathered.keys, whole.keys)


def test_a_shard_table_copied_over_another_is_named_with_the_regions_it_should_hold(tmp_path):
    toy = Toy(np.random.default_rng(4))
    first, second = write_shards(tmp_path, toy)
    first.write_bytes(second.read_bytes())  # cp 2-of-2.parquet 1-of-2.parquet
    with pytest.raises(InputError) as refused:
        read([first, second], toy)
    assert refused.value.source == str(first) and refused.value.field.startswith("column 'position' row ")
    assert " (-) is not in shard 1 of 2, which scores " in refused.value.message
    assert "c1:101-2,500 (+), c1:1,801-2,900 (+) (1-of-2.regions.json)" in refused.value.message
    assert "holds another shard's rows" in refused.value.message and "both strands" not in str(refused.value)


def test_a_record_copied_with_its_table_is_refused_by_its_name(tmp_path):
    toy = Toy(np.random.default_rng(4))
    first, second = write_shards(tmp_path, toy)
    record_path(first).write_text(record_path(second).read_text())
    with pytest.raises(InputError) as refused:
        read([first, second], toy)
    assert str(refused.value).startswith(
        f"{record_path(first)}: shard: records shard 2 of 2, not 1 of 2 as its name says"
    )


def test_a_shard_table_without_its_rows_names_the_regions_it_should_hold(tmp_path):
    toy = Toy(np.random.default_rng(4))
    first, second = write_shards(tmp_path, toy)
    toy.scores.clear().write_parquet(first)
    with pytest.raises(InputError) as refused:
        read([first, second], toy)
    assert refused.value.source == str(first) and refused.value.field == "rows"
    assert refused.value.message.startswith(
        "no scored position on chromosome 'c1' strand '+', where shard 1 of 2 scores c1:101-2,500"
    )


def test_a_table_named_otherwise_has_no_record_and_no_shard_check(tmp_path):
    toy = Toy(np.random.default_rng(4))
    first, _ = write_shards(tmp_path, toy)
    mine = tmp_path / "mine.parquet"
    mine.write_bytes(first.read_bytes())
    (tmp_path / "mine.regions.json").write_text("not json")
    with pytest.raises(InputError, match="score both strands"):  # gC, gD unscored: the general check
        read([mine], toy)


def test_the_shard_job_records_the_regions_it_scores(tmp_path, genome, weights):
    genome.save_cached(tmp_path / "genome")
    GENES.write_parquet(tmp_path / "genes.parquet")
    config = '{"calling": {"base_model": {"batch_size": 4, "chunk_length": 50, "device": "cpu"}}}'
    out = {"scores": tmp_path / "2-of-3.parquet", "regions": tmp_path / "2-of-3.regions.json"}
    argv = path_flags({"genes": tmp_path / "genes.parquet", "weights": weights}, out)
    score_base_model.main(
        [*argv, "--genome", str(tmp_path / "genome"), "--config", config, "--shard", "2", "--shards", "3"]
    )
    record = json.loads(out["regions"].read_text())
    planned = plan_shards(plan_regions(GENES, genome, load_ensemble(weights).context), 3)[1]
    expected = [[genome.names[r.chrom], "-" if r.minus else "+", r.start + 1, r.end] for r in planned]
    weights = record.pop("weights")  # provenance travels with the data: the weights' facts, by name
    assert record == {"shard": 2, "shards": 3, "regions": expected} and expected
    assert [fact["path"] for fact in weights["files"]] == ["model1.h5", "model2.h5"]
    assert weights["source"] == "weights" and all(len(fact["sha256"]) == 64 for fact in weights["files"])
    scores = pl.read_parquet(out["scores"])
    inside = pl.any_horizontal(
        (pl.col("chrom") == chrom) & (pl.col("strand") == strand) & pl.col("position").is_between(start, end)
        for chrom, strand, start, end in expected
    )
    assert scores.height > 0 and scores.filter(~inside).height == 0
