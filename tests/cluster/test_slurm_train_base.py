"""train_base on the local SLURM cluster through `--profile profiles/slurm`: base_data, then one
train_base job per seed (side by side, one fake GPU each); one seed's job stopped with SIGTERM
(what a time limit or preemption sends) saves a checkpoint and fails, and Snakemake's retry
resumes it while the other seed's job finishes untouched (not a job array: docs/slurm.md).

The genome index and the annotation's tables are made here first without SLURM (their own jobs
are tested in test_slurm.py), so the cluster runs base_data -> train_base. The cluster is
testkit/slurm_cluster.py's; assertions read SLURM's own view (scontrol) and the logs."""

from __future__ import annotations

import json
import os
import re
import signal
import time
from pathlib import Path

import pytest
import torch
import yaml

from testkit.slurm_cluster import PARTITION, slurm_cluster, why_slurm_cannot_run
from tests.calls_fixtures import annotation_workdir
from tests.cluster.test_slurm import (
    cluster_env,
    failure_report,
    jobs_of_rule,
    profile_args,
    slurm_time,
    write_test_profile,
    write_yaml,
)
from tests.workflow_helpers import snakemake, stacked_config, start_snakemake
from workflow_scripts import layout

pytestmark = pytest.mark.skipif(
    why_slurm_cannot_run() is not None, reason=f"SLURM tests: {why_slurm_cannot_run()}"
)

SEEDS = (1, 2)
# One GPU and one core per seed (the profile's shape, shrunk to the test node).
PROFILE = {
    "set-threads": {"train_base": 1},
    "set-resources": {
        "train_base": {
            "slurm_partition": PARTITION,
            "gpu": 1,
            "cpus_per_gpu": 1,
            "mem_mb": 2000,
            "runtime": 10,
        }
    },
}
# Two 80-nt models, eight epochs of three optimizer steps (the slice's one training gene; a step
# takes ~0.1 s, the torchrun start-up far longer), a progress line and a stop check after every
# step: the stop, sent once a seed has logged its first step, comes well before its end.
TRAIN_BASE = {"seeds": list(SEEDS), "epochs": 8, "log_every_steps": 1, "tensorboard": False}
UPSTREAM = (
    layout.GENOME_INDEX,
    layout.GENOME_SEQUENCE,
    layout.ANNOTATION_SITES,
    layout.ANNOTATION_GENE_CLUSTERS,
)


@pytest.fixture(scope="module")
def cluster():
    with slurm_cluster() as running:
        yield running


def prepare_workdir(workdir: Path) -> Path:
    """The A. thaliana slice, base_data and train_base on, the upstream tables made locally."""
    calling = annotation_workdir(workdir, shards=1)
    config = stacked_config("train-base")
    config["train_base"] = {
        **{k: v for k, v in config["train_base"].items() if k != "max_steps"},
        **TRAIN_BASE,
    }
    write_yaml(workdir / "test-config.yaml", {**config, **yaml.safe_load(calling.read_text())})
    done = snakemake(workdir, *UPSTREAM, "--configfile", str(workdir / "test-config.yaml"))
    assert done.returncode == 0, done.stderr[-3000:]
    return workdir


def launcher(workdir: Path, seed: int) -> tuple[int, str] | None:
    """(pid, SLURM_JOB_ID) of the running train_base rule process of one seed of this workdir: on one
    node it runs torchrun in itself, which passes a SIGTERM on to the ranks (None: none yet)."""
    run_dir = layout.TRAIN_BASE_RUN.format(seed=seed).encode()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            command = (proc / "cmdline").read_bytes().split(b"\0")
            if b"workflow_scripts.rules.train_base" not in command or run_dir not in command:
                continue
            if (proc / "cwd").resolve() != workdir.resolve():
                continue
            items = (proc / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        environ = dict(item.decode(errors="replace").split("=", 1) for item in items if b"=" in item)
        if "SLURM_JOB_ID" in environ:
            return int(proc.name), environ["SLURM_JOB_ID"]
    return None


def steps_logged(workdir: Path, seed: int) -> int:
    path = workdir / layout.TRAIN_BASE_RUN.format(seed=seed) / "steps.jsonl"
    text = path.read_text() if path.exists() else ""
    return sum(1 for line in text.splitlines() if '"kind": "train"' in line)


def wait_for_a_training_seed(workdir: Path, workflow, timeout: float = 300) -> tuple[int, int, str]:
    """(seed, its launcher's pid, its SLURM job) of the first seed that has logged an optimizer step."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and workflow.poll() is None:
        for seed in SEEDS:
            if steps_logged(workdir, seed) >= 1 and (found := launcher(workdir, seed)):
                return seed, *found
        time.sleep(0.5)
    raise AssertionError(f"no train_base worker logged a step (workflow exit code {workflow.poll()})")


def test_train_base_runs_one_job_per_seed_and_a_stopped_seed_resumes(cluster, tmp_path):
    began = time.monotonic()
    workdir = prepare_workdir(tmp_path / "work")
    models = [layout.TRAIN_BASE_MODEL.format(context=80, seed=seed) for seed in SEEDS]
    profile = write_test_profile(tmp_path / "profile", PROFILE)
    workflow = start_snakemake(
        workdir,
        *profile_args(workdir, profile),
        *models,
        output=tmp_path / "snakemake.out",
        env=cluster_env(cluster),
        cores=None,
    )
    try:
        stopped_seed, pid, stopped_job = wait_for_a_training_seed(workdir, workflow)
        # SIGTERM to the training, as SLURM's --signal=TERM@300 or a preemption sends it, but not
        # through `scancel --signal`: that signals the job's Snakemake too, whose SIGTERM handler
        # (snakemake 9.27, JobScheduler.exit_gracefully) takes a lock the interrupted thread may
        # hold, and the job then hangs until its time limit (seen here once in three; gdb)
        os.kill(pid, signal.SIGTERM)
        returncode = workflow.wait(timeout=400)
    finally:
        if workflow.poll() is None:
            workflow.kill()
    output = (tmp_path / "snakemake.out").read_text()
    print(f"base_data -> train_base on SLURM, seed {stopped_seed} stopped: {time.monotonic() - began:.0f} s")
    assert returncode == 0, failure_report(workdir, cluster, output)

    (base_data,) = jobs_of_rule(cluster, "base_data", workdir)
    assert base_data["JobState"] == "COMPLETED", base_data
    jobs = sorted(jobs_of_rule(cluster, "train_base", workdir), key=lambda job: int(job["JobId"]))
    assert len(jobs) == len(SEEDS) + 1 and not any(job.get("ArrayJobId") for job in jobs), jobs
    assert all(job.get("TresPerJob", "").endswith("gpu:1") for job in jobs), jobs  # --gpus=1 each
    first, second, retry = jobs  # the retry is submitted last
    assert slurm_time(second["StartTime"]) < slurm_time(first["EndTime"]), jobs  # side by side
    assert stopped_job in (first["JobId"], second["JobId"]) and retry["JobState"] == "COMPLETED", jobs
    states = {job["JobId"]: job["JobState"] for job in (first, second)}
    assert states.pop(stopped_job) == "FAILED" and list(states.values()) == ["COMPLETED"], jobs

    for seed, model in zip(SEEDS, models, strict=True):
        log = (workdir / f"logs/train_base/model_80nt_rs{seed}.log").read_text()
        resumed = re.search(r"resuming from step [1-9]", log)
        assert bool(resumed) == (seed == stopped_seed), log[-3000:]
        assert "world size 1" in log and "CUDA_VISIBLE_DEVICES=" in log, log[-3000:]
        state = torch.load(workdir / model, weights_only=True)
        assert "final_conv.weight" in state
        provenance = json.loads((workdir / model.replace(".pt", ".provenance.json")).read_text())
        assert provenance["seed"] == seed and provenance["epochs_done"] == TRAIN_BASE["epochs"], provenance
