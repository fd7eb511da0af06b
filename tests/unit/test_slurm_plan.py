from pathlib import Path

import yaml

from workflow_scripts.slurm_plan import parse_dry_run, sbatch_options

ROOT = Path(__file__).resolve().parents[2]

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


def test_only_training_rules_are_retried_on_the_cluster():
    profile = yaml.safe_load((ROOT / "profiles/slurm/config.yaml").read_text())
    assert profile.get("retries", 0) == 0
    # predict_calls too: a long scoring job on a preemptible GPU partition is worth a retry;
    # train_base resumes from its checkpoints as train does
    assert set(profile["preemptible-rules"]) == {"train", "pretrain", "train_base", "predict_calls"}
    assert profile["preemptible-retries"] >= 1
    local = yaml.safe_load((ROOT / "profiles/default/config.yaml").read_text())
    assert "cores" not in local and "retries" not in local
