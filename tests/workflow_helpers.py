"""Run the real Snakemake workflow on a tiny demo in a temporary working directory."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]

TINY_CONFIG = {
    "demo": {"n_genes": 400, "calls_per_gene": 3},
    "experiments": [{"name": "fp_vs_tp", "error_label": "FP", "correct_label": "TP"}],
    "bucket": {"max_tokens_per_batch": 3200},  # small batches: enough steps on ~500 windows
    "train": {"epochs": 4, "lr": 0.006, "log_every_steps": 5},
}


def snakemake_env() -> dict[str, str]:
    bin_dir = str(Path(sys.executable).parent)
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ.get('PATH', '')}")
    env.pop("OMP_NUM_THREADS", None)
    return env


def write_config(directory: Path, name: str, values: dict) -> Path:
    path = directory / name
    path.write_text(yaml.safe_dump(values))
    return path


def snakemake(workdir: Path, *args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    command = [
        str(Path(sys.executable).parent / "snakemake"),
        "--snakefile", str(ROOT / "Snakefile"),
        "--directory", str(workdir),
        "--cores", "2",
        *args,
    ]
    return subprocess.run(command, cwd=workdir, env=snakemake_env(), capture_output=True,
                          text=True, timeout=timeout)


def planned_rules(dry_run_output: str) -> set[str]:
    """Rule names from the job-stats table of `snakemake -n`."""
    rules, in_table = set(), False
    for line in dry_run_output.splitlines():
        if line.startswith("job ") and "count" in line:
            in_table = True
            continue
        if in_table:
            parts = line.split()
            if not parts or parts[0] == "total":
                break
            if not set(parts[0]) <= {"-"}:
                rules.add(parts[0])
    return rules
