"""Start torchrun with one training worker per GPU (or a set number of CPU processes).

The rules train and pretrain call `launch` (workflow_scripts.rules.train / .pretrain, through
training.entry, which writes the launch file first). The
process count comes from the rule's resources, never from CUDA_VISIBLE_DEVICES alone.
One node: a single `torchrun --standalone`. Several nodes (`nodes > 1`, inside a SLURM
allocation): `srun` starts one torchrun per node (training.node_torchrun, which names the node
and rank when one fails), and they meet through the c10d rendezvous on the allocation's first
node; `gpus` is then the job's total, split evenly over the nodes. cluster.collective_timeout_s
bounds the rendezvous and, in the ranks, every collective: a lost node ends the job.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import torch

from workflow_scripts.config.types import ClusterSection
from workflow_scripts.errors import InputError
from workflow_scripts.training.cluster_env import (
    apply_environment,
    export_section,
    preset_environment,
    section_from_environment,
)
from workflow_scripts.training.local_torchrun import run_torchrun

WORKER_MODULE = "workflow_scripts.training.worker"
NODE_TORCHRUN_MODULE = "workflow_scripts.training.node_torchrun"


@dataclass(frozen=True)
class Resources:
    """The rule's resources: GPUs of the job (0 = CPU processes), CPU processes, cores, nodes."""

    gpus: int
    cpu_procs: int
    threads: int
    nodes: int


@dataclass(frozen=True)
class Rendezvous:
    """Where the nodes' torchruns meet (c10d) and how long any of them waits for the others."""

    hosts: tuple[str, ...]  # the allocation's nodes; the first hosts the rendezvous
    port: int
    timeout_s: int

    @property
    def endpoint(self) -> str:
        return f"{self.hosts[0]}:{self.port}"


def launch(cluster: dict, launch_file: Path, resources: Resources) -> None:
    """Replace this process with torchrun (never returns): `launch_file` is every rank's argument,
    written and checked before (training.entry.start_run: check_run, write_launch_file)."""
    export_section(cluster)  # the ranks read their collective timeout from it
    applied = apply_environment(preset_environment(cluster))
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    command = build_command(resources, ["--launch-file", str(launch_file)], cluster)
    start_command(command, applied)


def start_command(command: list[str], applied: dict) -> NoReturn:
    """Print the launch line, then become torchrun (in this process on one node) or srun."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "unset")
    presets = " ".join(f"{name}={value}" for name, value in sorted(applied.items()))
    print(
        f"launch: CUDA_VISIBLE_DEVICES={visible} {presets} " + shlex.join(command),
        file=sys.stderr,
        flush=True,
    )
    if command[1:3] == ["-m", "torch.distributed.run"]:  # one node: torchrun in this process,
        run_torchrun(command[3:])  # so a rank's one-line error or a Ctrl-C ends without tracebacks
    os.execvp(command[0], command)


def cluster_section(section: ClusterSection | None) -> dict:
    """The cluster: section of --config (completed with the others), else the one the workflow
    exports for every job (not a rule param, so changing an NCCL setting does not retrain)."""
    if section is not None:
        return section.to_completed()
    return section_from_environment()


def processes_per_node(gpus: int, cpu_procs: int) -> int:
    if gpus < 0:
        raise InputError("resources", "gpu", f"must be ≥ 0 (got {gpus})")
    if gpus == 0 and cpu_procs < 1:
        raise InputError("resources", "cpu_procs", f"must be ≥ 1 (got {cpu_procs})")
    visible = torch.cuda.device_count() if torch.cuda.is_available() else None
    if gpus > 0 and visible is not None and gpus > visible:
        raise InputError("resources", "gpu", f"asks for {gpus} GPUs but only {visible} are visible")
    return gpus if gpus > 0 else cpu_procs


def gpus_per_node(gpus: int, nodes: int) -> int:
    if nodes < 1:
        raise InputError("resources", "nodes", f"must be ≥ 1 (got {nodes})")
    if gpus % nodes:
        raise InputError("resources", "gpu", f"{gpus} GPUs cannot be split evenly over {nodes} nodes")
    return gpus // nodes


def torchrun_command(nproc: int, worker_args: list[str], worker: str = WORKER_MODULE) -> list[str]:
    return [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        f"--nproc_per_node={nproc}",
        "--max_restarts=0",
        "-m",
        worker,
        *worker_args,
    ]


def allocation_hosts() -> tuple[str, ...]:
    """The nodes of this SLURM job in order (the first is the c10d rendezvous host)."""
    job_id = os.environ.get("SLURM_JOB_ID")
    if not job_id:
        raise InputError("resources", "nodes", "several nodes need a SLURM allocation (no SLURM_JOB_ID)")
    nodelist = (
        os.environ.get("SLURM_JOB_NODELIST")
        or subprocess.run(
            ["squeue", "-h", "-j", job_id, "-o", "%N"], capture_output=True, text=True, check=True
        ).stdout.strip()
    )
    hosts = subprocess.run(
        ["scontrol", "show", "hostnames", nodelist], capture_output=True, text=True, check=True
    ).stdout.split()
    return tuple(hosts)


def job_rendezvous_port(base: int, job_id: str) -> int:
    """cluster.rdzv_port + the job id mod 1000: two jobs whose first node is the same machine
    would otherwise meet at one port, and the second would join the first one's store."""
    offset = int(job_id) % 1000 if job_id.isdigit() else 0
    return base + offset if base + offset <= 65535 else base - offset


def srun_torchrun_command(
    nodes: int,
    nproc: int,
    gpus_each: int,
    rendezvous: Rendezvous,
    worker_args: list[str],
    worker: str = WORKER_MODULE,
) -> list[str]:
    """One torchrun per node through srun; the nodes meet at the first host (c10d rendezvous).
    join_timeout bounds the wait for every node to join, read_timeout each rendezvous-store
    request (a node that went silent); the ranks' collectives are bounded in the ranks."""
    srun = [
        "srun",
        f"--nodes={nodes}",
        f"--ntasks={nodes}",
        "--ntasks-per-node=1",
        "--kill-on-bad-exit=1",
        *([f"--gpus-per-node={gpus_each}"] if gpus_each else []),
    ]
    return srun + [
        sys.executable,
        "-m",
        NODE_TORCHRUN_MODULE,
        f"--nnodes={nodes}",
        f"--nproc_per_node={nproc}",
        "--max_restarts=0",
        "--rdzv-backend=c10d",
        f"--rdzv-endpoint={rendezvous.endpoint}",
        f"--rdzv-id=errorseq-{os.environ.get('SLURM_JOB_ID', 'local')}",
        f"--rdzv-conf=join_timeout={rendezvous.timeout_s},read_timeout={rendezvous.timeout_s}",
        "-m",
        worker,
        *worker_args,
    ]


def torchrun_in_this_process(resources: Resources) -> bool:
    """One node outside a SLURM batch step: torchrun runs in the rule's own process, so a thread
    there (training.console_relay) lives as long as the ranks. Otherwise this process becomes srun."""
    return resources.nodes == 1 and not in_batch_step()


def in_batch_step() -> bool:
    """Inside a SLURM job but not in one of its steps: a job-array task (the executor plugin runs
    those without its `srun -n1`) or an `mpi` rule on one node. srun sets SLURM_STEP_ID in a step."""
    return bool(os.environ.get("SLURM_JOB_ID")) and not os.environ.get("SLURM_STEP_ID")


def as_job_step(command: list[str]) -> list[str]:
    """One node's torchrun as a job step: the signals SLURM sends a job's steps (sbatch's
    --signal=TERM@300 before the time limit, `scancel --signal`) never reach the batch step, so
    the ranks would not save a checkpoint. The step gets the job's CPUs, memory and GPUs
    (srun's default without --exact); training.node_torchrun keeps the exit codes and names a failed rank."""
    print(
        "note: SLURM batch step (a job-array task): torchrun runs as a job step so that the job's "
        "signals reach the ranks",
        file=sys.stderr,
    )
    srun = ["srun", "--nodes=1", "--ntasks=1", "--kill-on-bad-exit=1"]
    return srun + [sys.executable, "-m", NODE_TORCHRUN_MODULE, *command[3:]]


def hide_gpus(nproc: int) -> None:
    """resources.gpu 0 means CPU processes with gloo. Where CUDA is visible the workers would
    otherwise all pick cuda:0 and NCCL refuses two ranks on one GPU; hide the GPUs from them."""
    os.environ["CUDA_VISIBLE_DEVICES"] = ""
    print(
        f"note: resources.gpu is 0: {nproc} CPU processes with gloo, GPUs hidden "
        "(snakemake --set-resources train:gpu=N trains on N GPUs)",
        file=sys.stderr,
    )


def build_command(
    resources: Resources, worker_args: list[str], cluster: dict, worker: str = WORKER_MODULE
) -> list[str]:
    """torchrun (one node) or srun + one torchrun per node, starting `worker` in every rank."""
    gpus_each = gpus_per_node(resources.gpus, resources.nodes)
    nproc = processes_per_node(gpus_each, resources.cpu_procs)
    # threads = the job's cores on all its nodes (gpu × cpus_per_gpu): shared by all its processes
    os.environ["OMP_NUM_THREADS"] = str(max(1, resources.threads // (nproc * resources.nodes)))
    if resources.gpus > 0 and not torch.cuda.is_available():
        print(
            f"warning: {resources.gpus} GPUs requested but CUDA is not available; "
            f"running {nproc} CPU processes per node with gloo",
            file=sys.stderr,
        )
    if resources.gpus == 0 and torch.cuda.is_available():
        hide_gpus(nproc)
    if resources.nodes == 1:
        command = torchrun_command(nproc, worker_args, worker)
        return as_job_step(command) if in_batch_step() else command
    port = job_rendezvous_port(int(cluster["rdzv_port"]), os.environ.get("SLURM_JOB_ID", ""))
    rendezvous = Rendezvous(allocation_hosts(), port, int(cluster["collective_timeout_s"]))
    print(
        f"multi-node: {resources.nodes} nodes ({', '.join(rendezvous.hosts)}) × {nproc} processes, "
        f"c10d rendezvous at {rendezvous.endpoint}, collective timeout {rendezvous.timeout_s} s",
        file=sys.stderr,
        flush=True,
    )
    return srun_torchrun_command(resources.nodes, nproc, gpus_each, rendezvous, worker_args, worker)
