"""The Snakemake demo, end to end, with DeepSpeed ZeRO-3 chosen by an override file
(`snakemake --configfile my-override.yaml`); evaluate loads the exported plain state dict. FSDP,
chosen the same way, trains the run whose console and reruns are checked below (its export is the
same plain state dict as DDP's: test_train.py; evaluate on such a dict: the DeepSpeed case here)."""

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import torch

from tests.train_fixtures import ROOT, subprocess_env
from tests.workflow_helpers import planned_rules, snakemake

OVERRIDES = {"deepspeed": "train: { strategy: deepspeed, zero_stage: 3, epochs: 1 }\n"}
SMALL_DEMO = (
    "demo: { n_genes: 40, calls_per_gene: 12 }\n"
    "experiments:\n  - { name: fp_vs_tp, error_label: FP, correct_label: TP }\n"
)
TARGET = "results/fp_vs_tp/evaluation/metrics.json"


def assert_plain_state_dict(path) -> None:
    """No wrapper prefixes (DDP's module., FSDP's or DeepSpeed's _...): what evaluate loads."""
    assert all(not key.startswith(("module.", "_")) for key in torch.load(path, weights_only=True))


@pytest.mark.parametrize("strategy", OVERRIDES)
def test_demo_trains_and_evaluates_with_a_strategy_override(tmp_path, strategy):
    override = tmp_path / "my-override.yaml"
    override.write_text(SMALL_DEMO + OVERRIDES[strategy])
    snakemake = shutil.which("snakemake", path=str(ROOT / ".venv" / "bin")) or "snakemake"
    result = subprocess.run(
        [
            snakemake,
            "-s",
            str(ROOT / "Snakefile"),
            "--directory",
            str(tmp_path),
            "--configfile",
            str(override),
            "--cores",
            "2",
            TARGET,
        ],
        cwd=ROOT,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=400,
    )
    log = tmp_path / "logs" / "fp_vs_tp" / "train.log"
    assert result.returncode == 0, result.stderr[-3000:] + (log.read_text()[-3000:] if log.exists() else "")
    model_dir = tmp_path / "results" / "fp_vs_tp" / "model"
    saved = json.loads((model_dir / "model.json").read_text())
    assert saved["train"]["strategy"] == strategy and saved["strategy"].startswith(strategy)
    assert_plain_state_dict(model_dir / "model.pt")
    assert (model_dir / "deepspeed_config.json").exists() == (strategy == "deepspeed")
    metrics = json.loads((tmp_path / TARGET).read_text())
    assert metrics["n"] > 0 and metrics["roc_auc"] is not None


# ---- reruns and the console (issue 17) ---------------------------------------------------------
MODEL_JSON = "results/fp_vs_tp/model/model.json"
TRAIN_LOG = "logs/fp_vs_tp/train.log"


def test_train_shows_progress_on_the_console_and_a_code_change_reruns_train_afresh(tmp_path):
    """Snakemake's own output, redirected to a file, gets the progress lines (the log keeps
    everything); an edit of code
    that train runs retrains from scratch, and `snakemake -n` says why train reruns. The workflow
    is a copy of the checkout that the test edits, the way a user edits theirs (Snakemake imports
    the package next to the Snakefile; the jobs find it on PYTHONPATH, ahead of the installed one).
    FSDP comes from the override file. A `--forcerun train` starts the trainer the same way as this
    rerun, on the checkpoints of a finished run (test_training_faults.py runs that directly)."""
    checkout = tmp_path / "checkout"
    for name in ("rules", "config", "workflow_scripts", "envs", "report", "profiles"):
        shutil.copytree(ROOT / name, checkout / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "Snakefile", checkout / "Snakefile")
    env = subprocess_env(PYTHONPATH=str(checkout))
    workdir = tmp_path / "run"
    workdir.mkdir()
    override = workdir / "tiny.yaml"
    override.write_text(SMALL_DEMO + "train: { strategy: fsdp, epochs: 2 }\n")

    def workflow(*args: str, output: Path | None = None):
        return snakemake(
            workdir,
            MODEL_JSON,
            "--configfile",
            str(override),
            *args,
            env=env,
            snakefile=checkout / "Snakefile",
            output=output,
        )

    first = workflow(output=tmp_path / "run.log")  # `> run.log 2>&1`: ranks' lines were overwritten
    assert first.returncode == 0, first.stdout[-3000:]
    console = first.stdout + first.stderr
    assert re.search(
        rf"^train fp_vs_tp: starting torchrun; the full log: tail -f {TRAIN_LOG}$", console, re.M
    ), console
    epochs = re.findall(
        r"^train fp_vs_tp: epoch (\d)/2, step \d+/\d+, loss [\d.]+, val_loss [\d.]+, "
        r"val_accuracy [\d.]+, val_roc_auc [\d.]+(?:, [\w ]+ left)? \[\d+:\d\d\]$",
        console,
        re.M,
    )
    assert epochs == ["1", "2"], console[-3000:]
    assert "train fp_vs_tp: done: results/fp_vs_tp/model/model.pt (best epoch" in console
    assert "epoch 1 [" not in console  # the log's progress bar stays in the log
    assert "epoch 1 [" in (workdir / TRAIN_LOG).read_text()
    saved = json.loads((workdir / MODEL_JSON).read_text())
    assert saved["train"]["strategy"] == "fsdp" and saved["strategy"].startswith("fsdp")
    assert_plain_state_dict(workdir / "results/fp_vs_tp/model/model.pt")

    loop = checkout / "workflow_scripts" / "training" / "loop.py"
    loop.write_text(loop.read_text() + "# an edit of the training loop\n")
    plan = workflow("-n")
    assert plan.returncode == 0, plan.stderr[-3000:]
    assert planned_rules(plan.stdout) == {"train"}, plan.stdout[-3000:]
    assert re.search(r"params have changed since last execution:\s+train\b", plan.stdout, re.I), plan.stdout[
        -3000:
    ]
    rerun = workflow()
    log = (workdir / TRAIN_LOG).read_text()
    assert rerun.returncode == 0, rerun.stderr[-3000:] + log[-3000:]
    assert "finished (its model was exported): starting afresh" in log and "resuming" not in log
