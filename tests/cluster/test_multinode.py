"""`train` across two SLURM nodes (2 nodes × 2 ranks, gloo) through `snakemake --profile profiles/slurm`.

The cluster comes from testkit/multinode_cluster.py: two slurmd nodes in their own network
namespaces with their own addresses and hostnames, one slurmctld, fake GPUs. Nothing is
mocked: sbatch allocates two nodes, the launcher runs `srun` + one torchrun per node, the
ranks meet through the c10d rendezvous on node1 and all-reduce over the bridge. Checked:
- the same losses as four ranks on one node (DDP, FSDP, DeepSpeed ZeRO-2), every rank's host
  and the rendezvous endpoint in the log;
- a rank killed on node2: the job fails within 30 s with a line naming node and rank, and
  Snakemake's retry resumes from the last checkpoint;
- a rank stuck on node2 (SIGSTOP, its node healthy): cluster.collective_timeout_s ends the job;
- node2's network cut: SLURM declares the node lost (SlurmdTimeout) and requeues the job.
Needs root; skips with the reason otherwise. Measured numbers: docs/slurm.md (multi-node).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
from pathlib import Path

import pytest

from testkit.multinode_cluster import (
    SLURMD_TIMEOUT_S,
    ClusterUnavailable,
    multinode_cluster,
    wait_seconds,
    why_multinode_cannot_run,
)
from testkit.slurm_cluster import PARTITION
from tests.cluster.test_slurm import deep_merge, failure_report, jobs_of_rule, write_test_profile, write_yaml
from tests.train_fixtures import launch_command, make_training_inputs
from tests.workflow_helpers import start_snakemake, subprocess_env

EXPERIMENT = "fp_vs_tp"
NODES, RANKS_PER_NODE = 2, 2
WORLD = NODES * RANKS_PER_NODE
COLLECTIVE_TIMEOUT_S = 15  # cluster.collective_timeout_s in these tests (default 600)
KILLED_RANK_BOUND_S = 30  # the bound for a killed training process
# A stuck rank: the others wait COLLECTIVE_TIMEOUT_S, then srun ends the step (SIGTERM, KillWait 10 s, SIGKILL).
STUCK_RANK_BOUND_S = COLLECTIVE_TIMEOUT_S + 45
# A silent node: SLURM pings every SlurmdTimeout/3 and declares it lost after SlurmdTimeout.
LOST_NODE_BOUND_S = SLURMD_TIMEOUT_S + SLURMD_TIMEOUT_S // 3 + 20

pytestmark = pytest.mark.skipif(
    why_multinode_cannot_run() is not None, reason=f"multi-node SLURM tests: {why_multinode_cannot_run()}"
)


# The multi-node recipe of docs/slurm.md, 2 ranks, 2 CPUs and 2 fake GPUs per node: one task
# (one torchrun) per node, `gpu` is the job's total, the rule's shell runs srun itself (mpi).
def multinode_resources(rule: str, nodes: int, gpus_per_node: int) -> dict:
    """The recipe's resources for `rule` on `nodes` nodes of `gpus_per_node` fake GPUs, one
    OpenMP thread per rank."""
    ranks = nodes * gpus_per_node
    return {
        "set-threads": {rule: ranks},  # gpu × cpus_per_gpu
        "set-resources": {
            rule: {
                "slurm_partition": PARTITION,
                "nodes": nodes,
                "gpu": ranks,
                "cpus_per_gpu": 1,
                "mpi": "srun",
                "tasks": nodes,
                "tasks_per_gpu": 0,
                "mem_mb": 1000,
                "runtime": 10,
                # --gpus alone may be split unevenly over the nodes; srun needs the same on each
                "slurm_extra": f"--signal=TERM@300 --gpus-per-node={gpus_per_node}",
            }
        },
    }


MULTINODE_PROFILE = {
    "jobs": 1,
    "preemptible-retries": 1,
    **multinode_resources("train", NODES, RANKS_PER_NODE),
}
MODEL = {"d_model": 16, "n_layers": 1}
STRATEGIES = ["ddp", "fsdp", "deepspeed"]
TRAIN = {"epochs": 1, "log_every_steps": 1, "seed": 3}
ACTIVE_STATES = {"PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "REQUEUED", "RESIZING", "SUSPENDED"}


@pytest.fixture(scope="module")
def cluster():
    try:
        with multinode_cluster() as running:
            yield running
    except ClusterUnavailable as error:
        pytest.skip(f"multi-node SLURM tests: {error}")


@pytest.fixture(scope="module")
def training_inputs(tmp_path_factory) -> dict[str, Path]:
    return make_training_inputs(tmp_path_factory.mktemp("inputs"), n=400)


def prepare_workdir(workdir: Path, inputs: dict[str, Path], train: dict, timeout_s: int) -> Path:
    """The experiment's windows and buckets in place, so that `train` is the only job."""
    experiment = workdir / "results" / EXPERIMENT
    (experiment / "buckets").mkdir(parents=True)
    for name, target in (
        ("windows", "windows.parquet"),
        ("manifest", "buckets/manifest.parquet"),
        ("summary", "buckets/summary.json"),
    ):
        (experiment / target).write_bytes(inputs[name].read_bytes())
    config = {
        "experiments": [{"name": EXPERIMENT, "error_label": "FP", "correct_label": "TP"}],
        "model": MODEL,
        "train": train,
        "cluster": {"collective_timeout_s": timeout_s},
    }
    write_yaml(workdir / "test-config.yaml", config)
    return workdir


def workflow_args(workdir: Path, profile: Path) -> list[str]:
    return [
        "--configfile",
        str(workdir / "test-config.yaml"),
        "--profile",
        str(profile),
        f"results/{EXPERIMENT}/model/model.pt",
        "--allowed-rules",
        "train",
    ]


def start_training(
    cluster,
    tmp_path: Path,
    inputs: dict[str, Path],
    train: dict,
    profile: dict | None = None,
    timeout_s: int = COLLECTIVE_TIMEOUT_S,
):
    """Snakemake with the multi-node profile, in the background; (workdir, process)."""
    workdir = prepare_workdir(tmp_path / "work", inputs, train, timeout_s)
    profile_dir = write_test_profile(tmp_path / "profile", deep_merge(MULTINODE_PROFILE, profile or {}))
    workflow = start_snakemake(
        workdir,
        *workflow_args(workdir, profile_dir),
        output=tmp_path / "snakemake.out",
        env=subprocess_env(**cluster.env),
        cores=None,
    )
    return workdir, workflow


def start_one_node_run(tmp_path: Path, inputs: dict[str, Path], train: dict) -> tuple[subprocess.Popen, Path]:
    """The same training as WORLD CPU ranks of one torchrun on this machine (no SLURM)."""
    out = tmp_path / "one-node"
    out.mkdir()
    command = launch_command(inputs, out, train, MODEL, procs=WORLD)
    with (out / "log").open("w") as log:
        process = subprocess.Popen(command, env=subprocess_env(), stdout=log, stderr=subprocess.STDOUT)
    return process, out


def losses(steps_jsonl: Path) -> list[tuple[str, int, float]]:
    records = [json.loads(line) for line in steps_jsonl.read_text().splitlines() if line.strip()]
    return [(r["kind"], r["step"], r["loss"] if r["kind"] == "train" else r["val_loss"]) for r in records]


def train_log(workdir: Path) -> str:
    path = workdir / "logs" / EXPERIMENT / "train.log"
    return path.read_text(errors="replace") if path.exists() else ""


def stop(workflow: subprocess.Popen) -> None:
    """Snakemake need not notice the end of a job a test has already measured (its status
    checks come ever more seldom): kill it and whatever it started (its own session)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(workflow.pid, signal.SIGKILL)
    workflow.wait()


def finish(workflow: subprocess.Popen, timeout: float) -> int:
    try:
        return workflow.wait(timeout=timeout)
    finally:
        if workflow.poll() is None:
            workflow.kill()
            workflow.wait()


def ended_train_job(
    cluster, workdir: Path, workflow: subprocess.Popen, timeout: float, rule: str = "train"
) -> dict | None:
    """The workdir's training job (of `rule`) once SLURM has ended it (None if Snakemake exits
    first or time runs out): the plugin's status checks come ever more seldom (2, 12, 22, ... s
    apart while the job runs), so Snakemake would notice the end up to half a minute later."""

    def ended() -> bool:
        jobs = jobs_of_rule(cluster, rule, workdir)
        return workflow.poll() is not None or bool(jobs and jobs[0]["JobState"] not in ACTIVE_STATES)

    wait_seconds(ended, timeout, interval=1.0)
    jobs = jobs_of_rule(cluster, rule, workdir)
    return jobs[0] if jobs and jobs[0]["JobState"] not in ACTIVE_STATES else None


def strategy_train(strategy: str) -> dict:
    return {**TRAIN, "strategy": strategy, **({"zero_stage": 2} if strategy == "deepspeed" else {})}


@pytest.fixture(scope="module")
def parity_runs(cluster, training_inputs, tmp_path_factory) -> dict[str, tuple[Path, Path, str]]:
    """Each strategy trained on 2 nodes × 2 ranks, submitted by Snakemake, and as 4 ranks of one
    torchrun on this machine, all six at once (most of each run is start-up and SLURM polling);
    strategy -> (the Snakemake workdir, the one-node run's folder, what went wrong or "")."""
    started = {}
    for strategy in STRATEGIES:
        tmp_path = tmp_path_factory.mktemp(strategy)
        one_node = start_one_node_run(tmp_path, training_inputs, strategy_train(strategy))
        # a generous timeout: six trainings share two cores
        two_nodes = start_training(
            cluster, tmp_path, training_inputs, strategy_train(strategy), timeout_s=300
        )
        started[strategy] = (tmp_path, one_node, two_nodes)
    runs = {}
    for strategy, (tmp_path, (one_node, one_node_out), (workdir, workflow)) in started.items():
        problems = []
        job = ended_train_job(cluster, workdir, workflow, timeout=600)
        stop(workflow)  # Snakemake's own verdict on a multi-node job: the killed-rank test
        if job is None or job["JobState"] != "COMPLETED":
            problems.append(failure_report(workdir, cluster, (tmp_path / "snakemake.out").read_text()))
        if one_node.wait(timeout=600) != 0:
            problems.append((one_node_out / "log").read_text()[-5000:])
        runs[strategy] = (workdir, one_node_out, "\n".join(problems))
    return runs


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_two_nodes_give_the_losses_of_one_node_and_log_every_ranks_host(cluster, parity_runs, strategy):
    workdir, one_node_out, problems = parity_runs[strategy]
    assert not problems, problems
    (job,) = jobs_of_rule(cluster, "train", workdir)
    assert job["JobState"] == "COMPLETED" and job["NumNodes"] == str(NODES), job
    log = train_log(workdir)
    assert f"world size {WORLD}" in log, log
    port = 29500 + int(job["JobId"]) % 1000  # cluster.rdzv_port + the job id mod 1000
    assert f"c10d rendezvous at node1:{port}" in log, log
    assert "rank host: 0 node1, 1 node1, 2 node2, 3 node2" in log, log
    assert (workdir / "results" / EXPERIMENT / "model" / "model.pt").exists()
    two_nodes = losses(workdir / "results" / EXPERIMENT / "model" / "steps.jsonl")
    reference = losses(one_node_out / "steps.jsonl")
    assert [r[:2] for r in two_nodes] == [r[:2] for r in reference] and len(two_nodes) > 10
    deltas = [abs(a[2] - b[2]) for a, b in zip(two_nodes, reference)]
    print(f"{strategy}: {len(deltas)} losses, largest difference {max(deltas):.2e}")
    assert max(deltas) < 1e-5, list(zip(two_nodes, reference))


def worker_pid(cluster, node: str, rank: int, workdir: Path) -> int:
    """The training process of one global rank on one node, of this test's run."""
    pids = []
    for pid in cluster.processes_on(node):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
            environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
            cwd = Path(f"/proc/{pid}/cwd").resolve()
        except OSError:
            continue
        if (
            b"workflow_scripts.training.worker" in command
            and f"RANK={rank}".encode() in environ
            and cwd == workdir.resolve()
        ):
            pids.append(pid)
    (pid,) = pids
    return pid


def job_state(cluster, workdir: Path, job_id: str) -> str:
    states = {job["JobId"]: job["JobState"] for job in jobs_of_rule(cluster, "train", workdir)}
    return states.get(job_id, "")


def wait_for_file(path: Path, workflow: subprocess.Popen, timeout: float = 240) -> None:
    wait_seconds(lambda: path.exists() or workflow.poll() is not None, timeout)
    assert path.exists(), f"{path} did not appear (workflow exit code {workflow.poll()})"


def seconds_until_job_leaves(state: str, cluster, workdir: Path, job_id: str, timeout: float) -> float | None:
    return wait_seconds(lambda: job_state(cluster, workdir, job_id) not in (state, ""), timeout)


def test_a_rank_killed_on_the_second_node_fails_the_job_fast_and_the_retry_resumes(
    cluster, training_inputs, tmp_path
):
    workdir, workflow = start_training(
        cluster, tmp_path, training_inputs, {**TRAIN, "epochs": 2, "checkpoint_every_steps": 4}
    )
    try:
        wait_for_file(workdir / "results" / EXPERIMENT / "model" / "checkpoints" / "latest", workflow)
        (first,) = jobs_of_rule(cluster, "train", workdir)
        victim = worker_pid(cluster, "node2", 2, workdir)
        os.kill(victim, signal.SIGKILL)
        ended_after = seconds_until_job_leaves("RUNNING", cluster, workdir, first["JobId"], 120)
        first_log = train_log(workdir)  # before the retry's job rewrites it
    finally:
        returncode = finish(workflow, timeout=400)
    output = (tmp_path / "snakemake.out").read_text()
    print(f"rank 2 killed on node2: job ended after {ended_after} s")
    assert returncode == 0, failure_report(workdir, cluster, output)
    assert ended_after is not None and ended_after < KILLED_RANK_BOUND_S, ended_after
    assert job_state(cluster, workdir, first["JobId"]) == "FAILED"
    named = f"errorseq: node node2: rank 2 (local rank 0, pid {victim}) was killed by SIGKILL"
    assert named in first_log + output, first_log
    states = [job["JobState"] for job in jobs_of_rule(cluster, "train", workdir)]
    assert states.count("COMPLETED") == 1, states
    assert re.search(r"resuming from checkpoint at step [1-9]", train_log(workdir)), train_log(workdir)
    assert (workdir / "results" / EXPERIMENT / "model" / "model.pt").exists()


def test_a_rank_stuck_on_the_second_node_ends_the_job_after_the_collective_timeout(
    cluster, training_inputs, tmp_path
):
    """Its node stays healthy, so only the ranks can tell: they give up after
    cluster.collective_timeout_s, the first node's torchrun fails and srun ends node2's."""
    workdir, workflow = start_training(
        cluster, tmp_path, training_inputs, {**TRAIN, "epochs": 50}, {"preemptible-retries": 0}
    )
    try:
        wait_for_file(
            workdir / "results" / EXPERIMENT / "model" / "checkpoints" / "steps.partial.jsonl", workflow
        )
        (job,) = jobs_of_rule(cluster, "train", workdir)
        os.kill(worker_pid(cluster, "node2", 2, workdir), signal.SIGSTOP)
        ended_after = seconds_until_job_leaves("RUNNING", cluster, workdir, job["JobId"], 300)
    finally:
        stop(workflow)
    log = train_log(workdir)
    print(f"rank 2 stopped on node2: job ended after {ended_after} s")
    assert job_state(cluster, workdir, job["JobId"]) == "FAILED"
    assert ended_after is not None and COLLECTIVE_TIMEOUT_S <= ended_after < STUCK_RANK_BOUND_S, ended_after
    assert f"Timed out waiting {COLLECTIVE_TIMEOUT_S * 1000}ms" in log, log
    assert re.search(
        r"errorseq: node node1: rank [01] \(local rank [01], pid \d+\) exited with code 1", log
    ), log


def test_a_node_that_loses_its_network_is_declared_lost_and_its_job_requeued(
    cluster, training_inputs, tmp_path
):
    workdir, workflow = start_training(
        cluster, tmp_path, training_inputs, {**TRAIN, "epochs": 50}, {"preemptible-retries": 0}
    )
    try:
        wait_for_file(
            workdir / "results" / EXPERIMENT / "model" / "checkpoints" / "steps.partial.jsonl", workflow
        )
        (job,) = jobs_of_rule(cluster, "train", workdir)
        cluster.cut_network("node2")
        ended_after = seconds_until_job_leaves(
            "RUNNING", cluster, workdir, job["JobId"], LOST_NODE_BOUND_S + 60
        )
        states = cluster.node_states()
        log = train_log(workdir)
    finally:
        cluster.restore_network("node2")
        stop(workflow)
        cluster.run("scancel", job["JobId"], check=False)
    print(f"node2's network cut: job left RUNNING after {ended_after} s, nodes {states}")
    assert ended_after is not None and ended_after < LOST_NODE_BOUND_S, (ended_after, log[-3000:])
    assert states["node2"].startswith("down"), states
    (record,) = [j for j in jobs_of_rule(cluster, "train", workdir) if j["JobId"] == job["JobId"]]
    assert record["Restarts"] == "1", record  # requeued: it would run again, resuming
    # the ranks did not hang: node1's ranks time out in the collective, or (on a loaded machine,
    # where slurmctld declares node2 down first) SLURM cancels the step for the node failure
    timed_out = f"Timed out waiting {COLLECTIVE_TIMEOUT_S * 1000}ms" in log
    assert timed_out or re.search(r"STEP \d+\.\d+ ON node1 CANCELLED .* DUE TO NODE FAILURE", log), log
