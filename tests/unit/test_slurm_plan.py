from workflow_scripts.slurm_plan import parse_dry_run, sbatch_options

DRY_RUN = """
rule train:
    input: results/a/windows.parquet
    output: results/a/model/model.pt
    jobid: 7
    wildcards: experiment=a
    threads: 8
    resources: tmpdir=<TBD>, mem_mb=64000, mem=64 GB, slurm_partition=gpu, runtime=720, gpu=4, cpu_procs=2, nodes=1, cpus_per_gpu=8, slurm_extra=--signal=TERM@300

rule plot:
    input: x
    output: results/a/plots/roc.png
    wildcards: experiment=a
    threads: 1
    resources: tmpdir=<TBD>, mem_mb=4000, slurm_partition=cpu, slurm_account=proj, runtime=15

localrule all:
    input: results/a/plots/roc.png
    jobid: 0
"""


def test_dry_run_jobs_are_read_with_their_threads_and_typed_resources():
    train, plot = parse_dry_run(DRY_RUN)
    assert (train.name, train.wildcards, train.threads) == ("train", "experiment=a", 8)
    assert train.resources["gpu"] == 4 and train.resources.slurm_extra == "--signal=TERM@300"
    assert plot.resources.slurm_account == "proj"


def test_gpu_job_asks_for_its_gpus_once_and_no_task_per_gpu():
    train, plot = parse_dry_run(DRY_RUN)
    options = sbatch_options(train)
    assert "--gpus=4" in options and "--cpus-per-gpu=8" in options and "-p gpu" in options
    assert "--ntasks-per-gpu" not in options and "--signal=TERM@300" in options
    assert "-t 720" in options and "--mem 64000" in options
    assert "-A proj" in sbatch_options(plot) and "--gpus" not in sbatch_options(plot)


# ---- the real plan of the repository's SLURM profile (snakemake -n with the profile) ----------
import subprocess  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
import yaml  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def slurm_plan(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "workflow_scripts.slurm_plan",
            "--profile",
            str(ROOT / "profiles/slurm"),
            "--directory",
            str(cwd),
            *args,
        ],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def planned(stdout: str, rule: str) -> list[str]:
    return [line for line in stdout.splitlines() if line.startswith(rule + " ")]


@pytest.mark.slow  # starts Snakemake
def test_training_jobs_get_the_profiles_threads_and_gpus_not_the_local_core_count(tmp_path):
    (tmp_path / "pretrain.yaml").write_text("pretrain: {enabled: true}\n")
    result = slurm_plan("--configfile", str(tmp_path / "pretrain.yaml"), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    profile = yaml.safe_load((ROOT / "profiles/slurm/config.yaml").read_text())
    for rule in ("train", "pretrain"):
        lines = planned(result.stdout, rule)
        assert lines, result.stdout
        threads = profile["set-threads"][rule]
        assert all(
            f"threads={threads} " in line and "-p gpu" in line and "--gpus=" in line for line in lines
        ), lines


def test_only_training_rules_are_retried_on_the_cluster():
    profile = yaml.safe_load((ROOT / "profiles/slurm/config.yaml").read_text())
    assert profile.get("retries", 0) == 0
    # predict_calls too: a long scoring job on a preemptible GPU partition is worth a retry
    assert set(profile["preemptible-rules"]) == {"train", "pretrain", "predict_calls"}
    assert profile["preemptible-retries"] >= 1
    local = yaml.safe_load((ROOT / "profiles/default/config.yaml").read_text())
    assert "cores" not in local and "retries" not in local


@pytest.mark.slow  # starts Snakemake
def test_a_snakemake_error_is_shown_without_the_profile_banner(tmp_path):
    result = slurm_plan("--configfile", "missing.yaml", cwd=tmp_path)
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert "missing.yaml" in line and "Using profile" not in line
