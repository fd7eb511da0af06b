"""train_base with the real torchrun, 2 gloo ranks on CPU, on a tiny slice (a 80-nt model on
blocks made for 400 nt): OpenSpliceAI's own model class loads the output and scores as errorseq
does; a SIGKILLed run resumes to the uninterrupted weights; DDP on 2 ranks trains what one rank
trains on the same global batch (FSDP2 and ZeRO-3 too); a frozen unit is unchanged; L2-SP pulls
toward the start."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import numpy as np
import pytest
import torch

from tests.base_data_fixtures import train_base_command, write_base_data
from tests.train_fixtures import ROOT
from tests.unit.test_openspliceai import reference, reference_model
from tests.workflow_helpers import HANG_GUARD_S, start_in_session, subprocess_env
from workflow_scripts.base_training.site_f1 import THRESHOLDS
from workflow_scripts.calling.openspliceai import UNIT_GROUPS, load_openspliceai
from workflow_scripts.io_utils import sha256_file

SETTINGS = {
    "epochs": 4,
    "lr": 0.002,
    "token_budget": 3000,
    "checkpoint_every_steps": 2,
    "log_every_steps": 1,
    "warmup_fraction": 0.1,
}
MODEL = "models/model_80nt_rs10.pt"


def run(command):
    return subprocess.run(
        command, cwd=ROOT, env=subprocess_env(), capture_output=True, text=True, timeout=HANG_GUARD_S
    )


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    folder = tmp_path_factory.mktemp("base_data")
    start = folder / "start.pt"
    torch.save(reference_model(4, channels=8, seed=2).state_dict(), start)  # OpenSpliceAI's class
    return write_base_data(folder / "data", context=400, blocks=60), start


@pytest.fixture(scope="module")
def uninterrupted(data, tmp_path_factory):
    files, start = data
    out = tmp_path_factory.mktemp("uninterrupted")
    result = run(train_base_command(files, out, SETTINGS, init=start))
    assert result.returncode == 0, result.stderr[-3000:]
    return out, result


def parameters(path) -> dict[str, torch.Tensor]:
    """The trained parameters (batch-norm running statistics left out: DDP keeps rank 0's)."""
    state = torch.load(path, weights_only=True)
    return {key: value for key, value in state.items() if "running_" not in key and "num_batches" not in key}


def test_openspliceai_loads_the_output_and_scores_as_errorseq(data, uninterrupted):
    out, result = uninterrupted
    files, start = data
    assert "world size 2" in result.stdout and "backend gloo" in result.stdout
    assert "labelled nt/s" in result.stderr
    widths = np.array([UNIT_GROUPS[0][0]] * 4)
    dilations = np.array([UNIT_GROUPS[0][1]] * 4)
    theirs = reference.SpliceAI(8, widths, dilations)
    theirs.load_state_dict(torch.load(out / MODEL, weights_only=True), strict=True)
    theirs.eval()
    ours = load_openspliceai(out / MODEL)  # what score_base_model runs
    x = torch.nn.functional.one_hot(torch.randint(0, 4, (3, 580)), 4).permute(0, 2, 1).float()
    with torch.no_grad():
        torch.testing.assert_close(ours(x), theirs(x), rtol=0, atol=1e-6)
    provenance = json.loads((out / "models/model_80nt_rs10.provenance.json").read_text())
    assert provenance["start"] == {
        "kind": "openspliceai",
        "file": "start.pt",
        "sha256": sha256_file(start),
        "notes": [],
    }
    assert provenance["data"]["labels"]["sha256"] == sha256_file(files.labels)
    assert provenance["model"]["sha256"] == sha256_file(out / MODEL) and provenance["seed"] == 10
    assert provenance["split"]["split"] == {"rule": "clusters", "seed": 0} and provenance["epochs_done"] == 4
    assert "/" not in json.dumps(provenance).replace("/ ", "")  # no machine paths
    card = (out / "models/model_80nt_rs10.card.md").read_text()
    assert "model_80nt_rs10.pt" in card
    last = provenance["last_validation"]  # the threshold the validation blocks pick, on the card
    assert last["picked_threshold"] in THRESHOLDS and 0 <= last["site_f1"] <= last["picked_site_f1"] <= 1
    assert f"`calling.threshold: {last['picked_threshold']:g}`" in card
    records = [json.loads(line) for line in (out / "run/steps.jsonl").read_text().splitlines()]
    val = [r for r in records if r["kind"] == "val"]
    assert [r["epoch"] for r in val] == [0, 1, 2, 3, 4] and all(
        r["labelled_nt_per_s"] > 0 for r in records if r["kind"] == "train"
    )
    assert val[-1]["val_loss"] < val[0]["val_loss"]
    assert (out / "run/curves.png").stat().st_size > 10_000


def test_a_killed_run_resumes_to_the_uninterrupted_weights(data, uninterrupted, tmp_path):
    files, start = data
    command = train_base_command(files, tmp_path, SETTINGS, init=start)
    process = start_in_session(command)
    pointer = tmp_path / "run/checkpoints/latest"
    deadline = time.monotonic() + HANG_GUARD_S
    while not pointer.exists() or pointer.read_text().strip() < "step-00000004":
        assert time.monotonic() < deadline and process.poll() is None, "no checkpoint appeared"
        time.sleep(0.01)
    os.killpg(process.pid, signal.SIGKILL)
    process.communicate(timeout=HANG_GUARD_S)
    assert not (tmp_path / MODEL).exists(), "training finished before the kill"
    result = run(command)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "resuming from step" in result.stdout
    reference_state = torch.load(uninterrupted[0] / MODEL, weights_only=True)
    resumed = torch.load(tmp_path / MODEL, weights_only=True)
    for key, value in reference_state.items():
        torch.testing.assert_close(resumed[key], value, rtol=0, atol=1e-6, msg=key)


def test_two_ddp_ranks_train_what_one_rank_trains_on_the_same_global_batch(data, uninterrupted, tmp_path):
    files, start = data
    result = run(
        train_base_command(files, tmp_path, {**SETTINGS, "grad_accumulation": 2}, procs=1, init=start)
    )
    assert result.returncode == 0, result.stderr[-3000:]
    one, two = parameters(tmp_path / MODEL), parameters(uninterrupted[0] / MODEL)
    assert_same_training(one, two)
    assert not torch.equal(two["final_conv.weight"], parameters_of_start(data[1])["final_conv.weight"])


def parameters_of_start(path) -> dict[str, torch.Tensor]:
    return {key: value.float() for key, value in torch.load(path, weights_only=True).items()}


def test_a_frozen_unit_is_unchanged_and_l2sp_pulls_toward_the_start(data, uninterrupted, tmp_path):
    files, start = data
    begin = parameters_of_start(start)
    frozen_run = run(
        train_base_command(
            files, tmp_path / "frozen", {**SETTINGS, "epochs": 2, "trainable_units": [1]}, init=start
        )
    )
    assert frozen_run.returncode == 0, frozen_run.stderr[-3000:]
    frozen = torch.load(tmp_path / "frozen" / MODEL, weights_only=True)
    kept = ("initial_conv.", "initial_skip.", "residual_units.0.", "residual_units.1.", "residual_units.2.")
    for key, value in frozen.items():
        if key.startswith(kept):
            assert torch.equal(value, begin[key]), key  # running statistics included
    assert not torch.equal(frozen["residual_units.3.conv1.weight"], begin["residual_units.3.conv1.weight"])

    pulled_run = run(train_base_command(files, tmp_path / "l2sp", {**SETTINGS, "l2sp": 50.0}, init=start))
    assert pulled_run.returncode == 0, pulled_run.stderr[-3000:]

    def distance(path) -> float:
        trained = parameters(path)
        return sum(float((trained[key] - begin[key]).pow(2).sum()) for key in trained)

    free, pulled = distance(uninterrupted[0] / MODEL), distance(tmp_path / "l2sp" / MODEL)
    assert pulled < 0.5 * free, (pulled, free)


@pytest.mark.parametrize("strategy", [{"strategy": "fsdp"}, {"strategy": "deepspeed", "zero_stage": 3}])
def test_fsdp_and_zero3_train_what_ddp_trains(data, uninterrupted, tmp_path, strategy):
    files, start = data
    result = run(train_base_command(files, tmp_path, {**SETTINGS, **strategy}, init=start))
    assert result.returncode == 0, result.stderr[-3000:]
    assert strategy["strategy"] in result.stdout
    assert_same_training(parameters(tmp_path / MODEL), parameters(uninterrupted[0] / MODEL))


def assert_same_training(ours: dict, reference: dict) -> None:
    """Every parameter within 1e-5 but the units' conv1 biases: each feeds a batch norm, which
    subtracts it again, so its true gradient is 0 and AdamW turns the rounding noise of another
    reduction order into lr-sized steps (FSDP2 against DDP: up to 3e-3 apart, every other tensor
    within 1e-6). They change no output."""
    compared = [key for key in reference if not key.endswith("conv1.bias")]
    assert len(compared) == len(reference) - 4
    for key in compared:
        torch.testing.assert_close(ours[key], reference[key], rtol=0, atol=1e-5, msg=key)


def test_export_best_val_auprc_writes_the_weights_of_that_epoch(data, uninterrupted, tmp_path):
    """train_base.export: the model is the epochs/ file of the trained epoch whose validation AUPRC
    (mean of the two types) is highest, byte for byte; the default (last) is the last epoch's."""
    files, start = data
    last = json.loads((uninterrupted[0] / "models/model_80nt_rs10.provenance.json").read_text())
    assert last["export"]["rule"] == "last" and last["export"]["epoch"] == SETTINGS["epochs"]
    result = run(
        train_base_command(files, tmp_path, {**SETTINGS, "export": "best_val_auprc"}, procs=1, init=start)
    )
    assert result.returncode == 0, result.stderr[-3000:]
    records = [json.loads(line) for line in (tmp_path / "run/steps.jsonl").read_text().splitlines()]
    trained = [r for r in records if r["kind"] == "val" and r["epoch"] >= 1]
    best = max(trained, key=lambda r: (r["acceptor_auprc"] + r["donor_auprc"], -r["epoch"]))["epoch"]
    provenance = json.loads((tmp_path / "models/model_80nt_rs10.provenance.json").read_text())
    assert provenance["export"]["rule"] == "best_val_auprc" and provenance["export"]["epoch"] == best
    epoch_file = tmp_path / f"run/epochs/model_80nt_rs10_epoch{best}.pt"
    assert (tmp_path / MODEL).read_bytes() == epoch_file.read_bytes()
    assert provenance["model"]["sha256"] == sha256_file(epoch_file)
    assert (
        f"the weights after epoch {best} (train_base.export best_val_auprc)"
        in (tmp_path / "models/model_80nt_rs10.card.md").read_text()
    )
    print(f"export best_val_auprc: epoch {best} of {SETTINGS['epochs']} ({[r['epoch'] for r in trained]})")
