"""Real torchrun, 2 gloo ranks on CPU: training, outputs, resume after SIGKILL or SIGTERM.
A rank killed mid-run (the whole job ends, naming it): test_faults.py."""

import json
import os
import re
import signal
import subprocess
import time

import pytest
import torch

from tests.train_fixtures import LABELS, ROOT, launch_command, make_training_inputs, subprocess_env
from tests.workflow_helpers import HANG_GUARD_S, start_in_session
from workflow_scripts.tokenization.tokenizers import NucleotideTokenizer, tokenizer_digest

MODEL = {"arch": "cnn", "d_model": 16, "n_layers": 2, "kernel_size": 5, "dropout": 0.1}
TRAIN = {"epochs": 3, "lr": 0.005, "checkpoint_every_steps": 3, "log_every_steps": 2, "seed": 3}


def run(command, **kwargs):
    return subprocess.run(
        command, cwd=ROOT, env=subprocess_env(), capture_output=True, text=True, timeout=300, **kwargs
    )


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    return make_training_inputs(tmp_path_factory.mktemp("data"))


@pytest.fixture(scope="module")
def uninterrupted(inputs, tmp_path_factory):
    out = tmp_path_factory.mktemp("uninterrupted")
    result = run(launch_command(inputs, out, TRAIN, MODEL))
    assert result.returncode == 0, result.stderr[-3000:]
    return out, result


def test_two_ranks_train_and_write_a_plain_state_dict(uninterrupted):
    out, result = uninterrupted
    assert "world size 2" in result.stdout and "backend gloo" in result.stdout
    state = torch.load(out / "model.pt", weights_only=True)
    assert all(not key.startswith("module.") for key in state)
    saved = json.loads((out / "model.json").read_text())
    assert saved["world_size"] == 2 and saved["tokenizer"] == {"kind": "nucleotide", "k": 1}
    assert saved["tokenizer_sha256"] == tokenizer_digest(NucleotideTokenizer(1))
    assert saved["experiment"] == "experiment" and saved["labels"] == LABELS  # what predict checks
    assert saved["window"] == {} and saved["input_columns"] == []  # ready-made windows, no call inputs
    records = [json.loads(line) for line in (out / "steps.jsonl").read_text().splitlines()]
    train = [r for r in records if r["kind"] == "train"]
    val = [r for r in records if r["kind"] == "val"]
    assert [r["epoch"] for r in val] == [1, 2, 3]
    assert train[-1]["step"] == saved["optimizer_steps"]
    assert all(r["tokens_per_s"] > 0 and r["rss_mb"] > 0 for r in train)
    assert val[-1]["val_loss"] < val[0]["val_loss"] or val[-1]["val_roc_auc"] > 0.8


def start_and_stop_after_a_checkpoint(command, out, signum, after="step-00000006"):
    """Start a training launch; send `signum` to the launcher once checkpoint `after` exists."""
    process = start_in_session(command)
    pointer = out / "checkpoints" / "latest"
    deadline = time.monotonic() + HANG_GUARD_S
    while not pointer.exists() or pointer.read_text().strip() < after:
        assert time.monotonic() < deadline and process.poll() is None, "no checkpoint appeared"
        time.sleep(0.01)
    os.killpg(process.pid, signum)  # torchrun only: its workers live in their own sessions
    output, _ = process.communicate(timeout=HANG_GUARD_S)
    assert not (out / "model.pt").exists(), "training finished before the signal"
    return process.returncode, output


def resumed_step(stdout: str) -> int:
    match = re.search(r"resuming from checkpoint at step (\d+)", stdout)
    assert match, stdout[-2000:]
    return int(match.group(1))


@pytest.mark.parametrize(
    "strategy, signum, train_extra",
    [
        ("ddp", signal.SIGKILL, {}),
        ("deepspeed", signal.SIGKILL, {"zero_stage": 3}),
        ("fsdp", signal.SIGTERM, {}),
    ],
)
def test_stopped_training_resumes_to_the_uninterrupted_weights(
    inputs, uninterrupted, tmp_path, strategy, signum, train_extra
):
    """SIGKILL of the launcher kills its workers too (no orphans); SIGTERM makes every rank save a
    checkpoint and exit non-zero. The rerun resumes mid-epoch and ends where the uninterrupted DDP
    run ends (FSDP2 and ZeRO-3 train the same model as DDP: see test_strategies.py)."""
    reference = torch.load(uninterrupted[0] / "model.pt", weights_only=True)
    command = launch_command(inputs, tmp_path, {**TRAIN, "strategy": strategy, **train_extra}, MODEL)
    code, output = start_and_stop_after_a_checkpoint(command, tmp_path, signum)
    assert code != 0
    if signum == signal.SIGTERM:
        assert "stopped by signal" in output and not list((tmp_path / "checkpoints").glob(".*partial"))
    result = run(command)
    assert result.returncode == 0, result.stderr[-3000:]
    step = resumed_step(result.stdout)
    assert step >= 6 and step % 20 != 0, step  # mid-epoch (20 steps an epoch; a loaded CI may be late)
    resumed = torch.load(tmp_path / "model.pt", weights_only=True)
    assert resumed.keys() == reference.keys()
    atol = 1e-6 if strategy == "ddp" else 1e-5
    for key, value in reference.items():
        torch.testing.assert_close(resumed[key], value, rtol=0, atol=atol, msg=key)
    if strategy == "deepspeed":
        saved = json.loads((tmp_path / "deepspeed_config.json").read_text())
        assert saved["zero_optimization"]["stage"] == 3 and saved["gradient_clipping"] == TRAIN.get(
            "grad_clip", 1.0
        )


def test_an_early_stop_is_said_on_the_console(inputs, tmp_path):
    """The console said '... steps in 6 epochs', then 'done (best epoch 1)' and nothing in between."""
    console = tmp_path / "console.txt"
    command = launch_command(
        inputs, tmp_path / "out", {**TRAIN, "epochs": 6, "patience": 1, "lr": 1e-12}, MODEL
    )
    result = run(["bash", "-c", f'exec "$@" --console-fd 3 3>"{console}"', "train", *command])
    assert result.returncode == 0, result.stderr[-3000:]
    text = console.read_text()
    assert re.search(
        r"stopped early after epoch 2 of 6: no better validation \w+ for 1 epochs \(train.patience\)", text
    ), text
    assert text.index("stopped early") < text.index("done: ")
