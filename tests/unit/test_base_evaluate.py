"""evaluate_base's library (base_training/evaluate.py): each test block scored by a folder of
OpenSpliceAI checkpoints (errorseq's network, compared here with OpenSpliceAI's own class), a model of
a smaller context cropping the block's flanks, the metrics of every model and the differences from
the first with gene-cluster intervals. In Snakemake with OpenSpliceAI's published weights:
tests/workflow/test_base_data_workflow.py."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tests.unit.test_base_data import build, planted_genome
from tests.unit.test_openspliceai import reference_model, write_checkpoint
from workflow_scripts.base_training.evaluate import (
    ONE_HOT,
    Scored,
    SiteCalls,
    block_probabilities,
    evaluate,
    load_models,
    pick_thresholds,
    score_test_blocks,
)
from workflow_scripts.config.sections import section_defaults
from workflow_scripts.errors import InputError
from workflow_scripts.workflow.preflight import check_input_files

ALL_TEST = {"train": 0.0, "validation": 0.0, "test": 1.0}


def checkpoints(tmp_path, folder: str, seeds: list[int]) -> list:
    (tmp_path / folder).mkdir()
    return [write_checkpoint(tmp_path / folder / f"model_80nt_rs{seed}.pt", seed=seed) for seed in seeds]


def test_a_folder_is_one_model_scored_as_openspliceais_own_class_on_the_cropped_block(tmp_path):
    genome, genes, sites = planted_genome()
    data, _ = build(tmp_path, genome, genes, sites, context=400, fractions=ALL_TEST)
    files = checkpoints(tmp_path, "start", [1, 2])
    (model,) = load_models(files, torch.device("cpu"))
    assert model.name == "start" and model.context == 80 and len(model.networks) == 2
    codes, _ = data.block(0)
    ours = block_probabilities(model, np.asarray(codes), 200, torch.device("cpu"))
    window = np.asarray(codes)[160:-160]  # 40 nt of the 200-nt flanks each side
    x = torch.from_numpy(ONE_HOT[window].T.copy())[None]
    with torch.no_grad():
        theirs = sum(reference_model(4, seed=seed)(x)[0] for seed in (1, 2)) / 2
    assert ours.shape == (data.blocks["core_end"][0] - data.blocks["core_start"][0], 3)
    np.testing.assert_allclose(ours, theirs.T.numpy(), atol=1e-5)


def test_every_model_is_reported_and_compared_with_the_first(tmp_path):
    genome, genes, sites = planted_genome()
    data, _ = build(tmp_path, genome, genes, sites, context=80, fractions=ALL_TEST)
    files = (
        checkpoints(tmp_path, "start", [1])
        + checkpoints(tmp_path, "trained", [2])
        + checkpoints(tmp_path, "same", [1])
    )
    models = load_models(files, torch.device("cpu"))
    assert [m.name for m in models] == ["start", "trained", "same"]
    scored = score_test_blocks(data, 40, models, torch.device("cpu"), None, None)
    assert scored.labels.size == int((data.blocks["core_end"] - data.blocks["core_start"]).sum())
    assert sorted(np.unique(scored.labels).tolist()) == [0, 1, 2]
    report = evaluate(scored, models, SiteCalls(0.5, 2, 2), replicates=20, seed=0)
    assert set(report["models"]) == {"start", "trained", "same"} and report["reference"] == "start"
    assert report["models"]["start"]["donor"]["sites"] == 2 and report["units"] == 2
    same = report["against_reference"]["same"]["donor_auprc"]
    assert same == {"difference": 0.0, "low": 0.0, "high": 0.0}
    assert report["against_reference"]["same"]["site_f1"] == {"difference": 0.0, "low": 0.0, "high": 0.0}
    assert set(report["models"]["trained"]["site_f1"]) == {"f1", "precision", "recall", "tp", "fp", "fn"}
    other = report["against_reference"]["trained"]["acceptor_auprc"]
    assert other["low"] <= other["high"]


def test_a_model_wider_than_the_blocks_context_is_one_line_error(tmp_path):
    genome, genes, sites = planted_genome()
    data, _ = build(tmp_path, genome, genes, sites, context=80, fractions=ALL_TEST)
    (tmp_path / "wide").mkdir()
    wide = write_checkpoint(tmp_path / "wide" / "model_400nt_rs1.pt", units=8)
    models = load_models([wide], torch.device("cpu"))
    with pytest.raises(InputError, match="400 nt needs base_data.context >= 400"):
        score_test_blocks(data, 40, models, torch.device("cpu"), None, None)
    with pytest.raises(InputError, match=r"an OpenSpliceAI state dict \(.pt\) is needed"):
        load_models([tmp_path / "wide" / "model.h5"], torch.device("cpu"))


def test_the_preflight_names_a_missing_model_folder_or_a_missing_annotation(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "genome.fa").write_text(">chr1\nACGT\n")
    (tmp_path / "a.gtf").write_text('chr1\tt\texon\t1\t2\t.\t+\t.\tgene_id "g"; transcript_id "t";\n')
    checkpoints(tmp_path, "start", [1])
    (tmp_path / "empty").mkdir()
    config = {name: section_defaults(name) for name in ("calling", "train", "base_data", "evaluate_base")}
    config["genome"] = "genome.fa"
    config["calling"] |= {"start": "annotation", "annotation": "a.gtf"}
    config["evaluate_base"] = {"models": ["start", "results/train_base/models"]}
    check_input_files(config)  # a folder of .pt files, and one this run makes
    for folder, message in (
        ("missing", "not found"),
        ("empty", "a folder of OpenSpliceAI .pt models is needed"),
    ):
        config["evaluate_base"] = {"models": ["start", folder]}
        with pytest.raises(InputError, match=f"{folder}: evaluate_base.models: {message}"):
            check_input_files(config)
    config["calling"].pop("annotation")
    with pytest.raises(InputError, match="config: calling.annotation: base_data builds"):
        check_input_files(config)


def test_each_model_is_also_called_at_the_threshold_its_validation_blocks_pick(tmp_path):
    """pick_thresholds: the lowest threshold of the grid with the best validation site F1, per model;
    evaluate reports the test's site F1 there too, paired against the first model."""
    labels = np.array([0, 0, 1, 0, 0, 0, 0, 2, 0, 0, 0, 0])  # an acceptor and a donor
    false_peak = 11  # neither, 4 nt from the donor: scored as one by "sharp"
    blocks, units = np.zeros(12, dtype=np.int64), np.zeros(12, dtype=np.int64)
    shy = np.tile([1.0, 0.0, 0.0], (12, 1))
    shy[2], shy[7] = [0.7, 0.3, 0.0], [0.7, 0.0, 0.3]  # every site at 0.3
    sharp = shy.copy()
    sharp[2], sharp[7], sharp[false_peak] = [0.2, 0.8, 0.0], [0.2, 0.0, 0.8], [0.6, 0.0, 0.4]
    scored = Scored(labels, units, blocks, {"shy": shy, "sharp": sharp})
    calls = SiteCalls(0.5, 2, 2)
    assert pick_thresholds(scored, calls) == {"shy": 0.05, "sharp": 0.45}
    models = load_models(
        checkpoints(tmp_path, "shy", [1]) + checkpoints(tmp_path, "sharp", [2]), torch.device("cpu")
    )
    report = evaluate(scored, models, calls, replicates=10, seed=0, picked=pick_thresholds(scored, calls))
    assert report["models"]["shy"]["site_f1"]["f1"] == 0.0  # nothing at 0.5
    assert report["models"]["shy"]["site_f1_picked"] == {
        "f1": 1.0,
        "precision": 1.0,
        "recall": 1.0,
        "tp": 2,
        "fp": 0,
        "fn": 0,
        "threshold": 0.05,
    }
    assert report["models"]["sharp"]["site_f1_picked"]["threshold"] == 0.45
    assert report["against_reference"]["sharp"]["site_f1_picked"]["difference"] == 0.0
    assert report["against_reference"]["sharp"]["site_f1"]["difference"] == 1.0
    no_sites = Scored(np.zeros(12, dtype=np.int64), units, blocks, {"shy": shy})
    assert pick_thresholds(no_sites, calls) == {}  # nothing to pick on: no site_f1_picked
