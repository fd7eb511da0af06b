"""Faults during a run: a rank that dies, a loss that is not finite, a Snakemake run killed in
the middle of training (and resumed), and outputs that are only ever written atomically.

Each test prints how long the fault took to be reported (`pytest -s` shows it)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.train_fixtures import ROOT, child_pids, launch_command, make_training_inputs, subprocess_env
from tests.workflow_helpers import (
    HANG_GUARD_S,
    planned_rules,
    snakemake,
    stacked_config,
    start_in_session,
    start_snakemake,
    write_config,
)

MODEL = {"arch": "cnn", "d_model": 16, "n_layers": 2, "kernel_size": 5}
# Not a bound on speed (the job ended 3.6 s after the kill, 2 cores at load 3.7): half the
# collective timeout (cluster.collective_timeout_s, 600 s), by which a rank left waiting for the
# dead one would still be waiting. No model.pt: it did not train its 50 epochs to the end.
BEFORE_COLLECTIVE_TIMEOUT_S = 300


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    return make_training_inputs(tmp_path_factory.mktemp("data"), n=160)


def start(command: list[str], **kwargs) -> subprocess.Popen:
    return start_in_session(command, **kwargs)


def wait_for(path: Path, process: subprocess.Popen, timeout: float = HANG_GUARD_S) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        if process.poll() is not None:
            output = process.stdout.read() if process.stdout else ""
            raise AssertionError(f"exited early ({process.returncode}):\n{output[-3000:]}")
        assert time.monotonic() < deadline, f"{path} did not appear"
        time.sleep(0.05)


def local_rank_of(pid: int) -> int:
    environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return int(next(v for v in environ if v.startswith(b"LOCAL_RANK=")).split(b"=", 1)[1])


def descendants(pid: int) -> list[int]:
    found, frontier = [], [pid]
    while frontier:
        children = [c for p in frontier for c in child_pids(p)]
        found += children
        frontier = children
    return found


def test_a_killed_rank_ends_the_job_before_training_ends_naming_the_rank(inputs, tmp_path):
    command = launch_command(inputs, tmp_path, {"epochs": 50, "checkpoint_every_steps": 2}, MODEL)
    process = start(command)
    try:
        wait_for(tmp_path / "checkpoints" / "latest", process)
        workers = child_pids(process.pid)  # the launcher exec'd torchrun: same pid
        victim = next(pid for pid in workers if local_rank_of(pid) == 1)
        killed_at = time.monotonic()
        os.kill(victim, signal.SIGKILL)
        output, _ = process.communicate(timeout=BEFORE_COLLECTIVE_TIMEOUT_S)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    seconds = time.monotonic() - killed_at
    print(f"\nrank 1 SIGKILLed: job ended after {seconds:.1f} s with exit code {process.returncode}")
    assert process.returncode != 0
    assert re.search(r"rank\s*:\s*1 \(local_rank: 1\)", output), output[-3000:]
    assert "SIGKILL" in output
    assert all(not Path(f"/proc/{pid}").exists() for pid in workers)
    assert not (tmp_path / "model.pt").exists()


def test_a_non_finite_loss_stops_training_naming_rank_and_step(inputs, tmp_path):
    command = launch_command(inputs, tmp_path, {"epochs": 3, "lr": 1e30, "log_every_steps": 1}, MODEL)
    began = time.monotonic()
    result = subprocess.run(
        command, cwd=ROOT, env=subprocess_env(), capture_output=True, text=True, timeout=HANG_GUARD_S
    )
    seconds = time.monotonic() - began
    output = result.stdout + result.stderr
    found = re.search(
        r"^errorseq: error: training: rank (\d+): loss is (nan|inf|-inf) at step (\d+) "
        r"\(epoch 1\); lower train.lr",
        output,
        re.MULTILINE,
    )
    assert result.returncode != 0 and found, output[-3000:]
    print(
        f"\nloss {found.group(2)} at step {found.group(3)}: reported, job ended {seconds:.1f} s after launch"
    )
    assert int(found.group(3)) <= 5
    assert not (tmp_path / "model.pt").exists() and not (tmp_path / "model.json").exists()


# ---- a Snakemake run killed while training, then resumed --------------------------------------
INTERRUPTED = stacked_config("interrupted")
MODEL_PT = "results/fp_vs_tp/model/model.pt"
FINISHED = (
    "results/genome/index.tsv",
    "results/fp_vs_tp/windows.parquet",
    "results/fp_vs_tp/buckets/manifest.parquet",
)


def test_a_killed_snakemake_run_resumes_training_without_redoing_finished_rules(tmp_path):
    config = write_config(tmp_path, "tiny.yaml", INTERRUPTED)
    console = tmp_path / "first-run.out"
    process = start_snakemake(tmp_path, MODEL_PT, "--configfile", str(config), output=console)
    latest = tmp_path / "results/fp_vs_tp/model/checkpoints/latest"
    try:
        try:
            wait_for(latest, process, timeout=300)
        except AssertionError as error:
            raise AssertionError(f"{error}\n{console.read_text()[-3000:]}") from None
        family = descendants(process.pid)
        os.killpg(process.pid, signal.SIGKILL)  # Snakemake and its job, as a crashed session would
        for pid in family:  # torchrun's workers run in sessions of their own
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert not (tmp_path / MODEL_PT).exists(), "training finished before the kill"
    stamps = {name: (tmp_path / name).stat().st_mtime_ns for name in FINISHED}

    unlock = snakemake(tmp_path, "--configfile", str(config), "--unlock")
    assert unlock.returncode == 0, unlock.stderr[-2000:]
    plan = snakemake(tmp_path, MODEL_PT, "-n", "--rerun-incomplete", "--configfile", str(config))
    assert planned_rules(plan.stdout) == {"train"}, plan.stdout[-3000:]
    began = time.monotonic()
    rerun = snakemake(tmp_path, MODEL_PT, "--rerun-incomplete", "--configfile", str(config))
    log = (tmp_path / "logs/fp_vs_tp/train.log").read_text()
    assert rerun.returncode == 0, rerun.stderr[-3000:] + log[-3000:]
    step = re.search(r"resuming from checkpoint at step (\d+)", log)
    assert step and int(step.group(1)) >= 2, log[-3000:]
    print(f"\nrerun resumed at step {step.group(1)} and finished train in {time.monotonic() - began:.1f} s")
    assert {name: (tmp_path / name).stat().st_mtime_ns for name in FINISHED} == stamps
    saved = json.loads((tmp_path / "results/fp_vs_tp/model/model.json").read_text())
    assert saved["optimizer_steps"] > int(step.group(1))


# ---- atomic outputs ---------------------------------------------------------------------------
WRITE_CALL = re.compile(
    r"\b(write_parquet|write_text|write_bytes|write_csv|savefig|torch\.save|np\.save|"
    r"dcp\.save)\(|open\([^)]*['\"][wa]b?['\"]"
)
# Writes that are not outputs of a rule, or land in a folder that is renamed when complete.
NOT_OUTPUTS = {
    (
        "training/telemetry.py",
        "self.path",
    ): "the step log is checkpoints/steps.partial.jsonl; train copies it atomically",
    (
        "training/strategies/fsdp.py",
        "dcp.save",
    ): "writes into the checkpoint's .partial folder (checkpoint.py renames it)",
    (
        "training/telemetry.py",
        'open(path, "a"',
    ): "the console (Snakemake's stderr): progress lines, not an output",
    (
        "data/tables.py",
        "write_parquet(self.parts[-1])",
    ): "ParquetParts: parts in a scratch folder; close() joins them into the output through atomic_path",
    (
        "sites/rescorer_files.py",
        "safetensors.torch.save(tensors)",
    ): "safetensors' bytes in memory; the re-scorer folder is written through io_utils.atomic_folder",
    (
        "calling/weights_fetch.py",
        "os.fdopen(fd",
    ): "a mkstemp file beside the target; renamed onto it by os.replace only when its sha256 matches",
}
TEMPORARY = re.compile(r"\b(tmp|with_tmp|partial|handle)\b")


def test_every_output_is_written_under_a_temporary_name_then_renamed():
    """Static audit: a write call in workflow_scripts either goes to a temporary name (from
    io_utils.atomic_path, or a .partial name that is os.replace'd) or is listed above with why."""
    offenders, used = [], set()
    package = ROOT / "workflow_scripts"
    for path in sorted(package.rglob("*.py")):
        name = str(path.relative_to(package))
        if name == "io_utils.py":
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("#")[0]
            if not WRITE_CALL.search(code) or code.lstrip().startswith(("from ", "import ")):
                continue
            if code.strip().startswith(("def ", "with open(")) and "tmp" in code:
                continue
            listed = [entry for entry in NOT_OUTPUTS if name == entry[0] and entry[1] in code]
            if listed:
                used.update(listed)
                continue
            if re.match(r"\s*write_(parquet|json|text)\(", code):  # io_utils helpers: atomic
                continue
            if not TEMPORARY.search(code):
                offenders.append(f"{name}:{number}: {line.strip()}")
    assert not offenders, "non-atomic writes:\n" + "\n".join(offenders)
    assert used == set(NOT_OUTPUTS), f"allow-list entries that match no write: {set(NOT_OUTPUTS) - used}"
