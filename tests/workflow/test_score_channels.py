"""Score channels through a real torchrun training: a label carried only by the scores is learnt
with the channels, and evaluate needs them. The rest: tests/unit/test_score_channels.py."""

import json
import subprocess

import pytest

from tests.score_channel_fixtures import (  # noqa: F401  (one_thread: a fixture)
    CNN,
    one_thread,
    train_small_cnn,
    windows_with_score_channels,
    without_score_channels,
)
from tests.train_fixtures import ROOT, launch_command, subprocess_env
from workflow_scripts.errors import InputError
from workflow_scripts.evaluation.predict import load_trained_model, predict_split
from workflow_scripts.metrics import roc_auc
from workflow_scripts.models.score_channels import SCORE_CHANNEL_COLUMNS


def train_through_torchrun(paths, out, score_channels) -> dict:
    """The train rule's entry point (torchrun, 2 CPU ranks) on these windows; model.json."""
    model_cfg = {**CNN, "score_channels": score_channels}
    result = subprocess.run(
        launch_command(paths, out, {"epochs": 3, "lr": 0.01, "seed": 0}, model_cfg, procs=2),
        cwd=ROOT,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "score channels along the sequence: donor_scores, acceptor_scores" in result.stdout + result.stderr
    return json.loads((out / "model.json").read_text())


def test_torchrun_training_with_the_channels_learns_them_and_evaluate_needs_them(tmp_path):
    paths = windows_with_score_channels(tmp_path, n=400)
    saved = train_through_torchrun(paths, tmp_path / "model", "on")
    assert saved["score_channels"] == list(SCORE_CHANNEL_COLUMNS)
    model, saved = load_trained_model(
        str(tmp_path / "model" / "model.pt"), str(tmp_path / "model" / "model.json")
    )
    data, probs = predict_split(model, saved, str(paths["windows"]), str(paths["manifest"]), "test", 64)
    assert roc_auc(data.labels, probs) > 0.9
    missing = without_score_channels(paths, tmp_path)
    with pytest.raises(InputError, match="acceptor_scores: column missing"):
        predict_split(model, saved, str(missing), str(paths["manifest"]), "test", 64)
