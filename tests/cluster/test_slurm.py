"""The demo pipeline on a real (loopback) SLURM cluster with `--profile profiles/slurm`.

The cluster comes from testkit/slurm_cluster.py: munged + slurmctld + slurmd started here, four
fake GPUs. Nothing is mocked: jobs go through sbatch, the plugin polls squeue, and the
assertions read SLURM's own view (scontrol) and the job logs. Skips without root/apt.

The two workflows run side by side (the demo in the background while the stopped-training test
runs): each spends most of its time waiting for the plugin's status checks, which come 2, 12,
22, ... s apart while none of its jobs ends.
"""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from testkit.slurm_cluster import PARTITION, slurm_cluster, why_slurm_cannot_run
from tests.calls_fixtures import CALLS, SHARD, annotation_workdir
from tests.workflow_helpers import start_snakemake, subprocess_env
from workflow_scripts.artifacts import PLOTS

REPO = Path(__file__).resolve().parents[2]
EXPERIMENT = "fp_vs_tp"
TRAIN_GPUS = 2

pytestmark = pytest.mark.skipif(
    why_slurm_cannot_run() is not None, reason=f"SLURM tests: {why_slurm_cannot_run()}"
)

# What a test machine needs on top of profiles/slurm: its partition, no accounts, sizes that
# fit one 2-core node with 2 fake GPUs, squeue status checks (no slurmdbd) and fast polling.
PROFILE_OVERRIDES = {
    "jobs": 4,
    "latency-wait": 5,
    "retries": 1,
    "slurm-status-command": "squeue",
    "slurm-init-seconds-before-status-checks": 2,
    "seconds-between-status-checks": 2,
    "slurm-keep-successful-logs": True,
    "slurm-no-account": True,
    "default-resources": {"slurm_partition": PARTITION, "mem_mb": 1000, "runtime": 10},
    "set-threads": {"train": TRAIN_GPUS},
    "set-resources": {
        "train": {
            "slurm_partition": PARTITION,
            "gpu": TRAIN_GPUS,
            "cpus_per_gpu": 1,
            "mem_mb": 3000,
            "runtime": 10,
        },
        "evaluate": {"slurm_partition": PARTITION, "cpus_per_gpu": 1, "mem_mb": 2000, "runtime": 10},
        "index_genome": {"mem_mb": 1000},
    },
}
CONFIG_OVERRIDES = {
    "demo": {"n_genes": 20, "calls_per_gene": 12},
    "experiments": [{"name": EXPERIMENT, "error_label": "FP", "correct_label": "TP"}],
    "model": {"d_model": 16, "n_layers": 1},
    "train": {"epochs": 1, "log_every_steps": 1},
    "cluster": {"env": {"ERRORSEQ_PROBE": "on-slurm"}},  # reaches train through its shell line
}


def deep_merge(base: dict, override: dict) -> dict:
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def write_yaml(path: Path, data: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def write_test_profile(directory: Path, extra: dict | None = None) -> Path:
    """profiles/slurm with the test machine's overrides merged in, as its own profile folder."""
    base = yaml.safe_load((REPO / "profiles" / "slurm" / "config.yaml").read_text())
    gpu_rules = {  # every other GPU rule of the profile, shrunk to the test node (1 CPU per GPU)
        rule: {"slurm_partition": PARTITION, "cpus_per_gpu": 1, "mem_mb": 2000, "runtime": 10}
        for rule, resources in base["set-resources"].items()
        if "gpu" in resources and rule not in PROFILE_OVERRIDES["set-resources"]
    }
    merged = deep_merge(deep_merge(base, {"set-resources": gpu_rules}), PROFILE_OVERRIDES)
    merged = deep_merge(merged, extra or {})
    write_yaml(directory / "config.yaml", merged)
    return directory


def write_test_workdir(directory: Path, extra: dict | None = None) -> Path:
    """A working directory whose test-config.yaml goes over the default config."""
    write_yaml(directory / "test-config.yaml", deep_merge(CONFIG_OVERRIDES, extra or {}))
    return directory


def profile_args(workdir: Path, profile: Path) -> list[str]:
    # Exactly the user's command: profiles/default is loaded too and must not override anything.
    return ["--configfile", str(workdir / "test-config.yaml"), "--profile", str(profile)]


def cluster_env(cluster) -> dict[str, str]:
    """The tests' one subprocess environment plus the cluster's config (not its PATH: cluster.env
    copies this process's environment, whose PATH may lack the venv the jobs must run in)."""
    return subprocess_env(SLURM_CONF=cluster.env["SLURM_CONF"])


def scontrol_jobs(cluster) -> list[dict[str, str]]:
    """Every job the controller still knows (MinJobAge keeps finished ones), as key=value."""
    text = cluster.run("scontrol", "show", "job", "-o", check=False)
    return [dict(re.findall(r"(\w+)=(\S*)", line)) for line in text.splitlines() if "JobId=" in line]


def jobs_of_rule(cluster, rule: str, workdir: Path) -> list[dict[str, str]]:
    """The jobs of one rule submitted from one working directory (one test)."""
    return [
        job
        for job in scontrol_jobs(cluster)
        if f"rule_{rule}" in job.get("Comment", "") and job.get("WorkDir") == str(workdir)
    ]


def slurm_job_log(workdir: Path, rule: str, job_id: str) -> str:
    logs = (workdir / ".snakemake" / "slurm_logs" / f"rule_{rule}").rglob(f"{job_id}.log")
    return "".join(path.read_text(errors="replace") for path in logs)


def failure_report(workdir: Path, cluster, output: str) -> str:
    logs = "\n".join(
        f"--- {p}\n{p.read_text(errors='replace')[-3000:]}" for p in sorted(workdir.glob("logs/**/*.log"))
    )
    jobs = "\n".join(str(job) for job in scontrol_jobs(cluster))
    return f"{output[-6000:]}\n{logs}\n--- jobs\n{jobs}\n--- slurmctld\n{cluster.log('slurmctld')[-2000:]}"


@pytest.fixture(scope="module")
def cluster():
    with slurm_cluster() as running:
        yield running


@pytest.fixture(scope="module")
def demo_in_background(cluster, tmp_path_factory):
    """The demo pipeline through the profile, started in the background: (workdir, process, output)."""
    root = tmp_path_factory.mktemp("demo")
    workdir = write_test_workdir(root / "work")
    output = root / "snakemake.out"
    workflow = start_snakemake(
        workdir,
        *profile_args(workdir, write_test_profile(root / "profile")),
        output=output,
        env=cluster_env(cluster),
        cores=None,
    )
    yield workdir, workflow, output
    if workflow.poll() is None:
        workflow.kill()
        workflow.wait()


def finish(workflow: subprocess.Popen, timeout: float) -> int | None:
    """The exit code of a background Snakemake, or None when it ran past `timeout`."""
    try:
        return workflow.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        return None


def write_training_inputs(workdir: Path) -> None:
    """Windows, manifest and bucket summary where the train rule expects them."""
    from tests.train_fixtures import make_training_inputs

    experiment = workdir / "results" / EXPERIMENT
    (experiment / "buckets").mkdir(parents=True)
    paths = make_training_inputs(experiment, n=300)
    paths["manifest"].rename(experiment / "buckets" / "manifest.parquet")
    paths["summary"].rename(experiment / "buckets" / "summary.json")


def wait_for_training_steps(
    workdir: Path, workflow: subprocess.Popen, steps: int, timeout: float = 180
) -> None:
    step_log = workdir / "results" / EXPERIMENT / "model" / "checkpoints" / "steps.partial.jsonl"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and workflow.poll() is None:
        if step_log.exists() and step_log.read_text().count("\n") >= steps:
            return
        time.sleep(0.5)
    raise AssertionError(f"training did not log {steps} steps (workflow exit code {workflow.poll()})")


@pytest.mark.usefixtures("demo_in_background")  # the demo runs meanwhile; its test comes next
def test_training_stopped_through_slurm_resumes_from_its_checkpoint(cluster, tmp_path):
    """SIGTERM to the running train job (what a time limit or preemption sends): the trainer
    saves a checkpoint and fails, Snakemake's retry submits a new job that resumes from it.
    About 23 steps an epoch: the stop comes near step 10, well before the end of the second."""
    workdir = write_test_workdir(
        tmp_path / "work", {"train": {"epochs": 2, "log_every_steps": 5, "checkpoint_every_steps": 100000}}
    )
    write_training_inputs(workdir)
    args = profile_args(workdir, write_test_profile(tmp_path / "profile")) + [
        f"results/{EXPERIMENT}/model/model.pt",
        "--allowed-rules",
        "train",
    ]
    workflow = start_snakemake(
        workdir, *args, output=tmp_path / "snakemake.out", env=cluster_env(cluster), cores=None
    )
    try:
        wait_for_training_steps(workdir, workflow, steps=2)
        (first,) = jobs_of_rule(cluster, "train", workdir)
        cluster.run("scancel", "--signal=TERM", first["JobId"])
        returncode = workflow.wait(timeout=300)
    finally:
        if workflow.poll() is None:
            workflow.kill()
    outputs = (tmp_path / "snakemake.out").read_text()
    assert returncode == 0, failure_report(workdir, cluster, outputs)
    states = {job["JobId"]: job["JobState"] for job in jobs_of_rule(cluster, "train", workdir)}
    assert states[first["JobId"]] == "FAILED" and list(states.values()).count("COMPLETED") == 1, states
    assert "exit code" in slurm_job_log(workdir, "train", first["JobId"])  # it did fail
    train_log = (workdir / "logs" / EXPERIMENT / "train.log").read_text()  # the retry's log
    assert re.search(r"resuming from checkpoint \S* ?at step [1-9]", train_log), train_log
    assert (workdir / "results" / EXPERIMENT / "model" / "model.pt").exists()


def test_demo_pipeline_runs_on_slurm_with_one_two_gpu_torchrun(cluster, demo_in_background):
    workdir, workflow, output = demo_in_background
    returncode = finish(workflow, timeout=600)
    assert returncode == 0, failure_report(workdir, cluster, f"{output.read_text()}\nexit code {returncode}")

    assert (workdir / "results" / EXPERIMENT / "evaluation" / "metrics.json").exists()
    assert len(list((workdir / "results" / EXPERIMENT / "plots").glob("*.png"))) == len(PLOTS)
    (train_job,) = jobs_of_rule(cluster, "train", workdir)
    assert train_job["JobState"] == "COMPLETED"
    assert train_job.get("TresPerJob", "").endswith(f"gpu:{TRAIN_GPUS}"), train_job  # --gpus=2
    assert train_job["NumTasks"] == "1"  # one task, not one per GPU
    assert slurm_job_log(workdir, "train", train_job["JobId"]), "the SLURM job log is missing"
    train_log = (workdir / "logs" / EXPERIMENT / "train.log").read_text()
    assert train_log.count("launch: ") == 1, train_log  # torchrun started once ...
    assert "ERRORSEQ_PROBE=on-slurm" in train_log  # cluster.env, exported by the job's shell prefix
    assert f"--nproc_per_node={TRAIN_GPUS}" in train_log  # ... with one process per GPU
    assert f"world size {TRAIN_GPUS}" in train_log
    # the GPUs SLURM bound to the job: two of the node's four (which two depends on the other test)
    bound = re.search(r"CUDA_VISIBLE_DEVICES=(\d+),(\d+)\b", train_log)
    assert bound and len(set(bound.groups())) == TRAIN_GPUS, train_log


def slurm_time(text: str) -> float:
    return time.mktime(time.strptime(text, "%Y-%m-%dT%H:%M:%S"))


def test_base_model_shards_are_gpu_jobs_that_run_at_once_and_are_gathered(cluster, tmp_path):
    """calling.start annotation with two shards: two score_base_model jobs, one fake GPU each,
    running at the same time (SLURM's own start and end times overlap), then make_calls."""
    workdir = tmp_path / "work"
    annotation_workdir(workdir, shards=2)
    write_yaml(workdir / "test-config.yaml", yaml.safe_load((workdir / "calling.yaml").read_text()))
    profile = write_test_profile(tmp_path / "profile", {"set-threads": {"score_base_model": 1}})
    workflow = start_snakemake(
        workdir,
        *profile_args(workdir, profile),
        CALLS,
        output=tmp_path / "snakemake.out",
        env=cluster_env(cluster),
        cores=None,
    )
    returncode = finish(workflow, timeout=400)
    output = (tmp_path / "snakemake.out").read_text()
    assert returncode == 0, failure_report(workdir, cluster, f"{output}\nexit code {returncode}")
    shards = jobs_of_rule(cluster, "score_base_model", workdir)
    assert len(shards) == 2 and {job["JobState"] for job in shards} == {"COMPLETED"}, shards
    assert all(job.get("TresPerJob", "").endswith("gpu:1") for job in shards), shards  # --gpus=1 each
    (first, second) = sorted(shards, key=lambda job: job["StartTime"])
    assert slurm_time(second["StartTime"]) < slurm_time(first["EndTime"]), (first, second)  # at once
    (calls_job,) = jobs_of_rule(cluster, "make_calls", workdir)
    assert slurm_time(calls_job["StartTime"]) >= max(slurm_time(job["EndTime"]) for job in shards)
    for shard in (1, 2):
        assert (workdir / SHARD.format(shard, 2)).exists()
    assert (workdir / CALLS).exists()
