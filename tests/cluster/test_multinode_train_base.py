"""train_base across two SLURM nodes (2 nodes × 1 rank, gloo) through `snakemake --profile
profiles/slurm`, against the same training as 2 ranks of one torchrun on this machine.

The cluster is testkit/multinode_cluster.py's (two slurmd nodes in their own network namespaces,
hostnames and addresses); the profile is docs/slurm.md's multi-node recipe for train_base (one
task per node, `gpu` the job's total, the rule's shell runs srun itself). base_data's folder is a
synthetic one (tests/base_data_fixtures.py) put in place, so train_base is the only job. Checked:
the ranks on both nodes met through the c10d rendezvous on node1; every step's training loss
within 1e-5 of the one-node run's, its validation losses within 1e-3 and its exported weights
equal by test_train_base.py's rule (the start weights are that test's). The launcher's failure
handling across nodes (a killed or stuck rank, a lost node) is train's, tested in test_multinode.py.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest
import torch

from testkit.multinode_cluster import why_multinode_cannot_run
from tests.base_data_fixtures import train_base_command, write_base_data
from tests.cluster.test_multinode import (
    cluster,  # noqa: F401  (the module's two-node cluster)
    ended_train_job,
    multinode_resources,
    stop,
)
from tests.cluster.test_slurm import failure_report, jobs_of_rule, write_test_profile, write_yaml
from tests.unit.test_openspliceai import reference_model
from tests.workflow.test_train_base import assert_same_training, parameters
from tests.workflow_helpers import start_snakemake, subprocess_env
from workflow_scripts import layout

NODES = 2
SEED = 3
# test_train_base.py's run (its start weights, lr, budget), 2 epochs
SETTINGS = {
    "epochs": 2,
    "lr": 0.002,
    "token_budget": 3000,
    "log_every_steps": 1,
    "warmup_fraction": 0.1,
    "tensorboard": False,
}

pytestmark = pytest.mark.skipif(
    why_multinode_cannot_run() is not None, reason=f"multi-node SLURM tests: {why_multinode_cannot_run()}"
)

# docs/slurm.md's multi-node shape for train_base: one torchrun per node (srun), one GPU each.
PROFILE = {"jobs": 1, **multinode_resources("train_base", NODES, 1)}


def records(steps_jsonl: Path) -> list[tuple[str, int, float]]:
    """(kind, step, loss) of every train and validation record."""
    lines = [json.loads(line) for line in steps_jsonl.read_text().splitlines() if line.strip()]
    return [
        (r["kind"], r["step"], r["loss"] if r["kind"] == "train" else r["val_loss"])
        for r in lines
        if r["kind"] in ("train", "val")
    ]


def test_two_nodes_train_the_base_model_one_node_trains(cluster, tmp_path):  # noqa: F811
    began = time.monotonic()
    workdir = tmp_path / "work"
    files = write_base_data(workdir / "results" / "base_data", context=400, blocks=60)
    start = workdir / "start.pt"  # OpenSpliceAI's own class, as in test_train_base.py
    torch.save(reference_model(4, channels=8, seed=2).state_dict(), start)
    reference = tmp_path / "one-node"  # the same training as 2 CPU ranks of one torchrun here
    with (tmp_path / "one-node.log").open("w") as log:
        local = subprocess.Popen(
            train_base_command(files, reference, SETTINGS, procs=NODES, seed=SEED, init=start),
            env=subprocess_env(),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    train_base = {"context": 80, "seeds": [SEED], "init_weights": "start.pt", **SETTINGS}
    write_yaml(
        workdir / "test-config.yaml", {"train_base": train_base, "cluster": {"collective_timeout_s": 300}}
    )
    profile = write_test_profile(tmp_path / "profile", PROFILE)
    model = layout.TRAIN_BASE_MODEL.format(context=80, seed=SEED)
    workflow = start_snakemake(
        workdir,
        "--configfile",
        str(workdir / "test-config.yaml"),
        "--profile",
        str(profile),
        model,
        "--allowed-rules",
        "train_base",
        output=tmp_path / "snakemake.out",
        env=subprocess_env(**cluster.env),
        cores=None,
    )
    job = ended_train_job(cluster, workdir, workflow, timeout=600, rule="train_base")
    stop(workflow)
    assert local.wait(timeout=600) == 0, (tmp_path / "one-node.log").read_text()[-5000:]
    print(f"train_base on 2 nodes × 1 rank through SLURM: {time.monotonic() - began:.0f} s")
    output = (tmp_path / "snakemake.out").read_text()
    assert job is not None and job["JobState"] == "COMPLETED", failure_report(workdir, cluster, output)

    (job,) = jobs_of_rule(cluster, "train_base", workdir)
    assert job["NumNodes"] == str(NODES), job
    log = (workdir / f"logs/train_base/model_80nt_rs{SEED}.log").read_text()
    port = 29500 + int(job["JobId"]) % 1000  # cluster.rdzv_port + the job id mod 1000
    assert f"c10d rendezvous at node1:{port}" in log, log[-3000:]
    assert "rank host: 0 node1, 1 node2" in log and "world size 2" in log, log[-3000:]
    two_nodes = records(workdir / layout.TRAIN_BASE_RUN.format(seed=SEED) / "steps.jsonl")
    one = records(reference / "run" / "steps.jsonl")
    assert [r[:2] for r in two_nodes] == [r[:2] for r in one] and len(two_nodes) > 6, (two_nodes, one)
    train = [abs(a[2] - b[2]) for a, b in zip(two_nodes, one, strict=True) if a[0] == "train"]
    val = [abs(a[2] - b[2]) for a, b in zip(two_nodes, one, strict=True) if a[0] == "val"]
    print(
        f"train_base, 2 nodes against 1 node: {len(train)} training losses, largest difference "
        f"{max(train):.2e}; {len(val)} validation losses, {max(val):.2e}"
    )
    assert max(train) < 1e-5, list(zip(two_nodes, one, strict=True))
    # Validation runs in eval mode on the batch-norm running statistics, which absorb the units'
    # conv1 biases: those drift by rounding noise (assert_same_training), so 1e-3 here.
    assert val[0] < 1e-6 and max(val) < 1e-3, list(zip(two_nodes, one, strict=True))
    assert "start openspliceai" in log and "world size 2" in (tmp_path / "one-node.log").read_text()
    assert_same_training(
        parameters(workdir / model), parameters(reference / "models" / f"model_80nt_rs{SEED}.pt")
    )
