"""The Snakemake demo, end to end, with DeepSpeed ZeRO-3 and with FSDP chosen by an override file
(`snakemake --configfile my-override.yaml`); evaluate loads the exported plain state dict."""

import json
import shutil
import subprocess

import pytest
import torch

from tests.train_fixtures import ROOT, subprocess_env

OVERRIDES = {
    "deepspeed": "train: { strategy: deepspeed, zero_stage: 3, epochs: 1 }\n",
    "fsdp": "train: { strategy: fsdp, epochs: 1 }\n",
}
SMALL_DEMO = (
    "demo: { n_genes: 40, calls_per_gene: 12 }\n"
    "experiments:\n  - { name: fp_vs_tp, error_label: FP, correct_label: TP }\n"
)
TARGET = "results/fp_vs_tp/evaluation/metrics.json"


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
    assert all(
        not key.startswith(("module.", "_")) for key in torch.load(model_dir / "model.pt", weights_only=True)
    )
    assert (model_dir / "deepspeed_config.json").exists() == (strategy == "deepspeed")
    assert json.loads((tmp_path / TARGET).read_text())
