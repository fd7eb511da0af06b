"""Training faults met through the train entry point and a real torchrun (2 gloo ranks on CPU),
as a user meets them: the exit status and one last line `errorseq: ...`, no traceback.

- a read-only or full output folder: one line naming it (a tmpfs in a private mount namespace)
- max_steps below log_every_steps: the last step is still logged and plotted
- a DeepSpeed JSON that contradicts errorseq or that DeepSpeed refuses: refused before torchrun
- Ctrl-C (SIGINT): a checkpoint, then one line
- a truncated checkpoint: skipped with one line, the one before it resumed
- a run that exported its model is trained afresh by a forced rerun
- a corrupted but loadable model.pt: refused by evaluate (its sha256 is in model.json)

The rest, each in a second: tests/unit/test_training_faults.py."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from testkit.rule_commands import evaluate_args
from tests.train_fixtures import ROOT, launch_command, make_training_inputs, subprocess_env
from tests.workflow_helpers import HANG_GUARD_S, start_in_session
from workflow_scripts.io_utils import sha256_file

MODEL = {"arch": "cnn", "d_model": 16, "n_layers": 2, "kernel_size": 5}

TRAIN = {"epochs": 3, "checkpoint_every_steps": 4, "log_every_steps": 5, "seed": 1}

STOPPED_LINE = re.compile(
    r"^errorseq: training: stopped by signal SIGINT at step (\d+); checkpoint saved in (\S+) \(rerun to resume\)$"
)


def run(command: list[str], timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        command, cwd=ROOT, env=subprocess_env(), capture_output=True, text=True, timeout=timeout
    )


def last_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    return make_training_inputs(tmp_path_factory.mktemp("data"), n=160)


def in_a_small_file_system(folder: Path, options: str, command: list[str]) -> list[str]:
    """`command` with `folder` a fresh tmpfs mounted with `options` (a private mount namespace)."""
    folder.mkdir(parents=True, exist_ok=True)
    return [
        "unshare",
        "-rm",
        "sh",
        "-c",
        f"mount -t tmpfs -o {options} tmpfs {shlex.quote(str(folder))} && exec " + shlex.join(command),
    ]


@pytest.fixture(scope="module")
def can_mount():
    probe = subprocess.run(["unshare", "-rm", "sh", "-c", "mount -t tmpfs tmpfs /mnt"], capture_output=True)
    if shutil.which("unshare") is None or probe.returncode != 0:
        pytest.skip(
            "needs unshare -rm and tmpfs mounts (a private mount namespace) to make a full or read-only disk"
        )


@pytest.mark.parametrize(
    "options, expected",
    [
        ("ro", r"errorseq: error: {out}: EROFS: Read-only file system"),  # before torchrun starts
        (
            "size=32k",
            r"errorseq: error: {out}/checkpoints/\.step-00000002\.partial/model_optimizer\.pt: "
            r"ENOSPC: No space left on device",
        ),  # the first checkpoint does not fit
    ],
)
def test_a_read_only_or_full_output_folder_is_one_line_naming_it(
    inputs, tmp_path, can_mount, options, expected
):
    out = tmp_path / "out"
    command = launch_command(inputs, out, {**TRAIN, "checkpoint_every_steps": 2}, MODEL)
    result = run(in_a_small_file_system(out, options, command))
    output = result.stdout + result.stderr
    assert result.returncode == 2, output[-3000:]
    assert re.fullmatch(expected.format(out=re.escape(str(out))), last_line(result.stderr)), output[-3000:]
    assert "Traceback" not in output
    assert ("torch.distributed.run" in result.stderr) == (options != "ro")


# ---- runs through the train entry point ---------------------------------------------------------
def test_max_steps_below_log_every_steps_still_logs_and_plots_the_last_step(inputs, tmp_path):
    from workflow_scripts.evaluation.plots.inputs import read_steps
    from workflow_scripts.evaluation.plots.training import training_curves_figure

    result = run(launch_command(inputs, tmp_path, {**TRAIN, "max_steps": 3, "log_every_steps": 50}, MODEL))
    assert result.returncode == 0, result.stderr[-3000:]
    records = [json.loads(line) for line in (tmp_path / "steps.jsonl").read_text().splitlines()]
    assert [(r["kind"], r["step"]) for r in records] == [("train", 3)]
    training_curves_figure(read_steps(tmp_path / "steps.jsonl"))


@pytest.mark.parametrize(
    "user, expected",
    [
        (
            {"train_micro_batch_size_per_gpu": 3},
            "train_micro_batch_size_per_gpu: 3 differs from the largest bucket "
            "batch size (bucket: section) (8); set it in one place",
        ),
        ({"zero_optimization": {"reduce_bucket_size": "big"}}, "DeepSpeed: refused by DeepSpeed: "),
    ],
)
def test_the_train_entry_point_refuses_a_bad_deepspeed_json_before_torchrun(inputs, tmp_path, user, expected):
    path = tmp_path / "ds.json"
    path.write_text(json.dumps(user))
    train = {**TRAIN, "strategy": "deepspeed", "zero_stage": 2, "deepspeed_config": str(path)}
    result = run(launch_command(inputs, tmp_path / "out", train, MODEL))
    assert result.returncode == 2, result.stderr[-3000:]
    assert last_line(result.stderr).startswith(f"errorseq: error: {path}: {expected}"), result.stderr[-3000:]
    assert "Traceback" not in result.stderr and "torch.distributed.run" not in result.stderr
    assert not (tmp_path / "out").exists()  # a refused run leaves nothing behind


def start(command: list[str]) -> subprocess.Popen:
    return start_in_session(command)


@pytest.fixture(scope="module")
def interrupted(inputs, tmp_path_factory):
    """A training run stopped by SIGINT to its process group (a terminal's Ctrl-C) once two
    checkpoints exist: (folder, command, exit code, output)."""
    out = tmp_path_factory.mktemp("interrupted")
    command = launch_command(inputs, out, TRAIN, MODEL)
    process = start(command)
    pointer, deadline = out / "checkpoints" / "latest", time.monotonic() + HANG_GUARD_S
    while not pointer.exists() or pointer.read_text().strip() < "step-00000008":
        assert process.poll() is None and time.monotonic() < deadline, process.communicate()[0][-3000:]
        time.sleep(0.02)
    os.killpg(process.pid, signal.SIGINT)  # torchrun passes it on to the ranks (own sessions)
    output, _ = process.communicate(timeout=HANG_GUARD_S)
    return out, command, process.returncode, output


def test_ctrl_c_saves_a_checkpoint_and_ends_with_one_line(interrupted):
    out, _, code, output = interrupted
    stopped = STOPPED_LINE.match(last_line(output))
    assert code == 128 + signal.SIGINT and stopped, output[-3000:]
    assert "Traceback" not in output and "KeyboardInterrupt" not in output
    saved = Path(stopped.group(2))
    assert saved.parent == out / "checkpoints" and saved.name == f"step-{int(stopped.group(1)):08d}"
    assert (saved / "trainer.pt").exists() and not list(saved.parent.glob(".*partial"))
    assert not (out / "model.pt").exists()


@pytest.fixture(scope="module")
def resumed_past_a_truncated_checkpoint(interrupted, tmp_path_factory):
    """The interrupted run's folder, its newest checkpoint cut short, rerun to the end."""
    out = tmp_path_factory.mktemp("truncated") / "out"
    shutil.copytree(interrupted[0], out)
    newest, older = sorted((out / "checkpoints").glob("step-*"), reverse=True)[:2]
    state = newest / "model_optimizer.pt"
    state.write_bytes(state.read_bytes()[: state.stat().st_size // 2])
    command = [arg.replace(str(interrupted[0]), str(out)) for arg in interrupted[1]]
    return out, command, newest, older, run(command)


def test_a_truncated_checkpoint_is_skipped_and_the_one_before_resumed(resumed_past_a_truncated_checkpoint):
    out, _, newest, older, result = resumed_past_a_truncated_checkpoint
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    skipped = re.findall(
        r"^note: skipping checkpoint (\S+): it does not load \((.*)\); trying an older one$",
        result.stdout,
        re.MULTILINE,
    )
    assert [path for path, _ in skipped] == [str(newest)], result.stdout[-3000:]
    assert re.fullmatch(r"model_optimizer\.pt is \d+ bytes, not \d+", skipped[0][1])
    step = int(re.search(r"resuming from checkpoint at step (\d+)", result.stdout).group(1))
    assert f"step-{step:08d}" == older.name
    assert json.loads((out / "model.json").read_text())["optimizer_steps"] > int(newest.name.split("-")[1])


def test_a_finished_run_is_trained_afresh_by_a_forced_rerun(resumed_past_a_truncated_checkpoint):
    out, command, *_ = resumed_past_a_truncated_checkpoint
    assert (out / "checkpoints" / "finished").exists()
    rerun = run(command)  # what `snakemake --forcerun train` starts, the old checkpoints still there
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert "finished (its model was exported): starting afresh" in rerun.stdout
    assert "resuming" not in rerun.stdout


def test_evaluate_refuses_a_model_pt_changed_after_training(
    resumed_past_a_truncated_checkpoint, inputs, tmp_path
):
    out = resumed_past_a_truncated_checkpoint[0]
    saved = json.loads((out / "model.json").read_text())
    assert saved["weights_sha256"] == sha256_file(out / "model.pt")
    state = torch.load(out / "model.pt", weights_only=True)
    name = next(key for key, value in state.items() if value.is_floating_point())
    state[name] = state[name] + 0.5  # still a model that loads and predicts: silently wrong
    corrupted = tmp_path / "model.pt"
    torch.save(state, corrupted)
    command = [
        sys.executable,
        *evaluate_args(
            inputs, corrupted, out / "model.json", "experiment", tmp_path / "p.parquet", tmp_path / "m.json"
        ),
        "--config",
        json.dumps({"evaluate": {}}),
    ]
    result = run(command)
    assert result.returncode == 2
    assert result.stderr == (
        f"errorseq: error: {corrupted}: sha256: differs from the weights_sha256 train recorded "
        f"in {out / 'model.json'}: the file changed after training (rerun train)\n"
    )
    assert not (tmp_path / "m.json").exists()
