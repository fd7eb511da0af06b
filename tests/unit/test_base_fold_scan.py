"""fold_scan: a whole-region scan scored out of fold. Each position by the fold model whose test
genes hold it, else by the nearest core's fold; scores equal OpenSpliceAI's own class on the whole
chromosome (both strands) with that fold's weights; the shard's rows and record written beside."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

from tests.unit.test_base_data import random_genome
from tests.unit.test_openspliceai import reference_model, reference_scores, write_checkpoint
from workflow_scripts.base_training.fold_scan import assign, main, runs
from workflow_scripts.errors import InputError

LENGTH = 1200
# fold 0 tests [100, 300) and [700, 800) on +, fold 1 [400, 500) on + and [200, 600) on -
TEST_CORES = {0: [("+", 100, 300), ("+", 700, 800)], 1: [("+", 400, 500), ("-", 200, 600)]}


def cores_frame(rows: list[tuple[str, int, int, int]]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=["strand", "core_start", "core_end", "fold"], orient="row")


def test_a_position_takes_its_cores_fold_else_the_nearest_cores_and_the_left_one_on_a_tie():
    cores = cores_frame([("+", 100, 300, 0), ("+", 401, 500, 1), ("+", 700, 800, 0)])
    positions = np.array([0, 99, 100, 299, 300, 349, 350, 351, 401, 499, 599, 600, 1000])
    # 350 lies 51 nt from both cores: the left one's fold
    assert assign(positions, cores).tolist() == [0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0]
    assert assign(positions, cores_frame([])).tolist() == [0] * positions.size
    assert runs(np.array([0, 0, 1, 1, 1]), np.array([5, 6, 7, 8, 20])) == [(0, 2), (2, 4), (4, 5)]


def fold_folders(tmp_path, cores: dict[int, list[tuple[str, int, int]]]) -> list:
    folders = []
    for k, rows in cores.items():
        base = tmp_path / f"fold{k}" / "results" / "base_data"
        base.mkdir(parents=True)
        other = [("+", 1000, 1100)]  # a train block: never a test core
        frame = pl.DataFrame(
            [("c1", s, a, b, "test") for s, a, b in rows] + [("c1", s, a, b, "train") for s, a, b in other],
            schema=["chrom", "strand", "core_start", "core_end", "split"],
            orient="row",
        )
        frame.write_parquet(base / "blocks.parquet")
        (tmp_path / f"fold{k}" / "models").mkdir()
        write_checkpoint(tmp_path / f"fold{k}" / "models" / "model_80nt_rs1.pt", seed=10 + k)
        folders.append(tmp_path / f"fold{k}")
    return folders


def scan_folder(tmp_path, genome):
    scan = tmp_path / "scan" / "results"
    (scan / "base_model" / "shards").mkdir(parents=True)
    genome.save_cached(scan / "genome")
    rows = pl.DataFrame(
        {
            "gene_id": ["region"] * (2 * LENGTH),
            "chrom": ["c1"] * (2 * LENGTH),
            "strand": ["+"] * LENGTH + ["-"] * LENGTH,
            "position": np.r_[np.arange(1, LENGTH + 1), np.arange(1, LENGTH + 1)],
            "donor": np.zeros(2 * LENGTH, np.float32),
            "acceptor": np.zeros(2 * LENGTH, np.float32),
        }
    )
    rows.write_parquet(scan / "base_model" / "shards" / "1-of-1.parquet")
    regions = {"shard": 1, "shards": 1, "regions": [["c1", "+", 1, LENGTH], ["c1", "-", 1, LENGTH]]}
    (scan / "base_model" / "shards" / "1-of-1.regions.json").write_text(json.dumps(regions))
    return tmp_path / "scan"


def test_every_position_is_scored_by_its_folds_model_as_openspliceai_scores_the_chromosome(
    tmp_path, monkeypatch
):
    genome = random_genome({"c1": LENGTH})
    folds = fold_folders(tmp_path, TEST_CORES)
    scan = scan_folder(tmp_path, genome)
    monkeypatch.setattr("workflow_scripts.base_training.fold_scan.STRETCH_NT", 150)  # stretches cut too
    out = tmp_path / "out"
    main(["--folds", *map(str, folds), "--models", "models", "--scan", str(scan), "--out", str(out)])
    rows = pl.read_parquet(out / "1-of-1.parquet")
    assert rows.columns == ["gene_id", "chrom", "strand", "position", "donor", "acceptor"]
    record = json.loads((out / "1-of-1.regions.json").read_text())
    assert record["regions"] == [["c1", "+", 1, LENGTH], ["c1", "-", 1, LENGTH]]
    assert [f["path"] for f in record["weights"]["files"]] == ["model_80nt_rs1.pt"] * 2
    whole = {"gene_id": "c1", "chrom": "c1", "start": 1, "end": LENGTH}
    expected_fold = {
        "+": np.r_[np.zeros(350), np.ones(250), np.zeros(600)],  # midway between the cores
        "-": np.ones(LENGTH),
    }
    for strand in "+-":
        got = rows.filter(pl.col("strand") == strand).sort("position").select("donor", "acceptor").to_numpy()
        by_fold = [
            reference_scores(reference_model(4, seed=10 + k), genome, whole | {"strand": strand}, 40)
            for k in (0, 1)
        ]
        expected = np.where(expected_fold[strand][:, None] == 0, by_fold[0], by_fold[1])
        np.testing.assert_allclose(got, expected, atol=1e-5)
        assert not np.allclose(by_fold[0], by_fold[1])


def test_overlapping_test_cores_of_two_folds_are_refused(tmp_path):
    folds = fold_folders(tmp_path, {0: [("+", 100, 300)], 1: [("+", 250, 400)]})
    with pytest.raises(InputError, match="overlap"):
        main(
            [
                "--folds",
                *map(str, folds),
                "--models",
                "models",
                "--scan",
                str(tmp_path),
                "--out",
                str(tmp_path / "o"),
            ]
        )
