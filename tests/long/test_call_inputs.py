"""The base model's call as model input, trained: a model given the score learns from it and one
without cannot. The features and models: tests/unit/test_call_inputs.py."""

import json
import subprocess

from tests.train_fixtures import ROOT, launch_command, subprocess_env
from tests.unit.test_call_inputs import windows_with_a_score
from workflow_scripts.evaluation.predict import load_trained_model, predict_split
from workflow_scripts.metrics import roc_auc


def train_and_score_test(paths, out, call_inputs):
    model_cfg = {"arch": "cnn", "d_model": 16, "n_layers": 1, "kernel_size": 5, "call_inputs": call_inputs}
    train_cfg = {"epochs": 6, "lr": 0.01, "seed": 0}
    result = subprocess.run(
        launch_command(paths, out, train_cfg, model_cfg, procs=1),
        cwd=ROOT,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    model, saved = load_trained_model(str(out / "model.pt"), str(out / "model.json"))
    data, probs = predict_split(model, saved, str(paths["windows"]), str(paths["manifest"]), "test", 64)
    return saved, roc_auc(data.labels, probs)


def test_a_model_given_the_score_learns_from_it_and_one_without_cannot(tmp_path):
    paths = windows_with_a_score(tmp_path, score_carries_label=True)
    saved, with_score = train_and_score_test(paths, tmp_path / "fused", "auto")
    assert saved["input_columns"] == ["score", "splice_type"]
    _, without = train_and_score_test(paths, tmp_path / "plain", [])
    assert with_score > 0.9, with_score
    assert without < 0.75, without
    assert json.loads((tmp_path / "plain" / "model.json").read_text())["input_columns"] == []
