"""out_of_fold: pooled out-of-fold site F1, validation-picked thresholds, bootstrap (report); model
folders scored as the mean of their files, each file scored once per fold and split (split_scored)."""

import dataclasses
import json

import numpy as np
import polars as pl
import pytest
import torch

from tests.unit.test_base_data import build, planted_genome
from tests.unit.test_base_evaluate import checkpoints
from tests.unit.test_openspliceai import write_checkpoint
from workflow_scripts.base_training.evaluate import load_models, score_test_blocks
from workflow_scripts.base_training.out_of_fold import GRID, report, split_scored
from workflow_scripts.errors import InputError


def fold(units: int, best: float, seed: int) -> dict[str, np.ndarray]:
    """Counts for 2 models: model 0 always TP 5 / FP 5 / FN 5 per unit; model 1 perfect at `best`
    (TP 10) and like model 0 elsewhere."""
    base = np.zeros((2, len(GRID), units, 3), dtype=np.int64)
    base[:] = [5, 5, 5]
    at = int(np.flatnonzero(np.isclose(GRID, best))[0])
    base[1, at] = [10, 0, 0]
    return {"validation": base.copy(), "test": base.copy()}


def test_the_validation_threshold_is_picked_per_fold_and_units_pool_across_folds():
    counts = [fold(4, 0.3, 0), fold(6, 0.5, 1)]
    result = report(counts, ["start", "tuned"], threshold=0.5, replicates=50)
    assert result["units"] == 10
    assert [row["models"]["tuned"]["validation_threshold"] for row in result["folds"]] == [0.3, 0.5]
    assert result["picked"]["tuned"]["f1"] == 1.0 and result["picked"]["start"]["f1"] == 0.5
    fixed = result["fixed"]["tuned"]  # fold 0 at 0.5 is like the start, fold 1 perfect
    assert fixed["tp"] == 4 * 5 + 6 * 10 and fixed["fp"] == 4 * 5
    low, high = fixed["difference_interval"]
    assert 0 < low <= fixed["difference"] <= high
    assert result["fixed"]["start"]["difference_interval"] == [0.0, 0.0]


def fold_folder(tmp_path):
    """A fold folder as out_of_fold reads it: results/base_data of a planted genome, one gene in
    validation and one in test."""
    genome, genes, sites = planted_genome()
    base = tmp_path / "fold" / "results" / "base_data"
    data, _ = build(
        base, genome, genes, sites, context=80, fractions={"train": 0.0, "validation": 0.5, "test": 0.5}
    )
    assert set(data.blocks["split"]) == {"validation", "test"}
    (base / "manifest.json").write_text(json.dumps({"half_context": 40}))
    return tmp_path / "fold", data


def test_a_folder_of_several_files_is_their_mean_and_each_file_is_scored_once(tmp_path):
    fold, data = fold_folder(tmp_path)
    (start,) = checkpoints(fold, "start", [1])
    (fold / "ensemble").mkdir()  # the start's own file (a copy) and another seed's
    (fold / "ensemble" / "model_80nt_rs1.pt").write_bytes(start.read_bytes())
    write_checkpoint(fold / "ensemble" / "model_80nt_rs2.pt", seed=2)
    scored = split_scored(fold, ["start", "ensemble"], "test")
    test = data.blocks.filter(pl.col("split") == "test")
    reference = score_test_blocks(
        dataclasses.replace(data, blocks=test),
        40,
        load_models(sorted((fold / "ensemble").glob("*.pt")), torch.device("cpu")),
        torch.device("cpu"),
        None,
        None,
    )
    np.testing.assert_allclose(
        scored.probabilities["ensemble"], reference.probabilities["ensemble"], atol=1e-6
    )
    assert not np.allclose(scored.probabilities["start"], scored.probabilities["ensemble"])
    cached = sorted((fold / "out_of_fold").glob("*.npy"))
    assert len(cached) == 2  # rs1 is one file in two folders: scored once
    checkpoints(fold, "other", [3])
    again = split_scored(fold, ["start", "ensemble", "other"], "test")
    assert len(sorted((fold / "out_of_fold").glob("*.npy"))) == 3  # only the new file was scored
    np.testing.assert_array_equal(again.probabilities["ensemble"], scored.probabilities["ensemble"])
    validation = split_scored(fold, ["start"], "validation")
    assert validation.labels.size == int(
        (
            data.blocks.filter(pl.col("split") == "validation").select(
                pl.col("core_end") - pl.col("core_start")
            )
        )
        .sum()
        .item()
    )


def test_a_cached_file_of_another_shape_is_a_one_line_error_naming_it(tmp_path):
    fold, _ = fold_folder(tmp_path)
    checkpoints(fold, "start", [1])
    split_scored(fold, ["start"], "test")
    (cached,) = (fold / "out_of_fold").glob("*.npy")
    np.save(cached, np.zeros((3, 3), dtype=np.float32))
    with pytest.raises(InputError, match=cached.name):
        split_scored(fold, ["start"], "test")
