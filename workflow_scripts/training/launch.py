"""Start training with torchrun, one process per GPU (or a set number of CPU processes).

    python -m workflow_scripts.training.launch --gpus 0 --cpu-procs 2 --threads 2 -- <train arguments>

The process count comes from the rule's resources, never from CUDA_VISIBLE_DEVICES alone.
One node: a single `torchrun --standalone`. Several nodes (`--nodes N`, inside a SLURM
allocation): `srun` starts one torchrun per node, and they meet through the c10d rendezvous
on the allocation's first node; `--gpus` is then the job's total, split evenly over the nodes.
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys

import torch

from workflow_scripts.training.cluster_env import CLUSTER_ENV_VARIABLE, apply_environment, parse_cluster_section, preset_environment
from workflow_scripts.errors import InputError, run_cli
from workflow_scripts.config.train import TrainConfig

TRAIN_MODULE = "workflow_scripts.training.train"
DEFAULT_RDZV_PORT = 29500


def parse_args(argv: list[str] | None) -> tuple[argparse.Namespace, list[str]]:
    argv = list(sys.argv[1:] if argv is None else argv)
    split_at = argv.index("--") if "--" in argv else len(argv)
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--gpus", type=int, default=0, help="GPUs given to this job (resources.gpu)")
    parser.add_argument("--cpu-procs", type=int, default=2, help="processes when there is no GPU")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="CPU cores of the job")
    parser.add_argument("--module", default=TRAIN_MODULE)
    parser.add_argument("--nodes", type=int, default=1, help="nodes of the job (resources.nodes)")
    parser.add_argument(
        "--cluster-env", default=os.environ.get(CLUSTER_ENV_VARIABLE, "{}"),
        help=f"the config's cluster: section as JSON (default: ${CLUSTER_ENV_VARIABLE})",
    )
    return parser.parse_args(argv[:split_at]), argv[split_at + 1 :]


def processes_per_node(gpus: int, cpu_procs: int) -> int:
    if gpus < 0:
        raise InputError("resources", "gpu", f"must be ≥ 0 (got {gpus})")
    if gpus == 0 and cpu_procs < 1:
        raise InputError("resources", "cpu_procs", f"must be ≥ 1 (got {cpu_procs})")
    visible = torch.cuda.device_count() if torch.cuda.is_available() else None
    if gpus > 0 and visible is not None and gpus > visible:
        raise InputError("resources", "gpu", f"asks for {gpus} GPUs but only {visible} are visible")
    return gpus if gpus > 0 else cpu_procs


def check_train_config(train_args: list[str]) -> None:
    """Check the train: section once, here, before torchrun starts N ranks that would each fail
    with the same error: unknown keys and ranges (TrainConfig), fp16 without CUDA, fp16 with fsdp."""
    if "--train-config" not in train_args[:-1]:
        return
    cfg = TrainConfig.from_json(train_args[train_args.index("--train-config") + 1])
    if cfg.precision == "fp16" and cfg.strategy == "fsdp":
        raise InputError("config", "train.precision", "fsdp trains in fp32 or bf16 here; use bf16")
    if cfg.precision == "fp16" and not torch.cuda.is_available():
        raise InputError("config", "train.precision", "fp16 needs a CUDA GPU; use bf16 or fp32 on CPU")


def torchrun_command(nproc: int, module: str, train_args: list[str]) -> list[str]:
    return [
        sys.executable, "-m", "torch.distributed.run",
        "--standalone", f"--nproc_per_node={nproc}", "--max_restarts=0",
        "-m", module, *train_args,
    ]


def gpus_per_node(gpus: int, nodes: int) -> int:
    if nodes < 1:
        raise InputError("resources", "nodes", f"must be ≥ 1 (got {nodes})")
    if gpus % nodes:
        raise InputError("resources", "gpu", f"{gpus} GPUs cannot be split evenly over {nodes} nodes")
    return gpus // nodes


def allocation_head_node() -> str:
    """The first node of this SLURM job (the c10d rendezvous host)."""
    job_id = os.environ.get("SLURM_JOB_ID")
    if not job_id:
        raise InputError("resources", "nodes", "several nodes need a SLURM allocation (no SLURM_JOB_ID)")
    nodelist = os.environ.get("SLURM_JOB_NODELIST") or subprocess.run(
        ["squeue", "-h", "-j", job_id, "-o", "%N"], capture_output=True, text=True, check=True
    ).stdout.strip()
    hosts = subprocess.run(["scontrol", "show", "hostnames", nodelist],
                           capture_output=True, text=True, check=True).stdout.split()
    return hosts[0]


def srun_torchrun_command(nodes: int, nproc: int, gpus_each: int, head: str, port: int,
                          module: str, train_args: list[str]) -> list[str]:
    """One torchrun per node through srun; the nodes meet at head:port (c10d rendezvous)."""
    srun = ["srun", f"--nodes={nodes}", f"--ntasks={nodes}", "--ntasks-per-node=1",
            "--kill-on-bad-exit=1", *([f"--gpus-per-node={gpus_each}"] if gpus_each else [])]
    return srun + [
        sys.executable, "-m", "torch.distributed.run",
        f"--nnodes={nodes}", f"--nproc_per_node={nproc}", "--max_restarts=0",
        "--rdzv-backend=c10d", f"--rdzv-endpoint={head}:{port}",
        f"--rdzv-id=errorseq-{os.environ.get('SLURM_JOB_ID', 'local')}",
        "-m", module, *train_args,
    ]


def hide_gpus(nproc: int) -> None:
    """resources.gpu 0 means CPU processes with gloo. Where CUDA is visible the workers would
    otherwise all pick cuda:0 and NCCL refuses two ranks on one GPU; hide the GPUs from them."""
    os.environ["CUDA_VISIBLE_DEVICES"] = ""
    print(f"note: resources.gpu is 0: {nproc} CPU processes with gloo, GPUs hidden "
          "(snakemake --set-resources train:gpu=N trains on N GPUs)", file=sys.stderr)


def build_command(args: argparse.Namespace, train_args: list[str], rdzv_port: int) -> list[str]:
    gpus_each = gpus_per_node(args.gpus, args.nodes)
    nproc = processes_per_node(gpus_each, args.cpu_procs)
    os.environ["OMP_NUM_THREADS"] = str(max(1, args.threads // nproc))
    if args.gpus > 0 and not torch.cuda.is_available():
        print(f"warning: {args.gpus} GPUs requested but CUDA is not available; "
              f"running {nproc} CPU processes per node with gloo", file=sys.stderr)
    if args.gpus == 0 and torch.cuda.is_available():
        hide_gpus(nproc)
    if args.nodes == 1:
        return torchrun_command(nproc, args.module, train_args)
    return srun_torchrun_command(args.nodes, nproc, gpus_each, allocation_head_node(),
                                 rdzv_port, args.module, train_args)


def main(argv: list[str] | None = None) -> None:
    args, train_args = parse_args(argv)
    check_train_config(train_args)
    cluster = parse_cluster_section(args.cluster_env)
    applied = apply_environment(preset_environment(cluster))
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    command = build_command(args, train_args, int(cluster.get("rdzv_port", DEFAULT_RDZV_PORT)))
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "unset")
    presets = " ".join(f"{name}={value}" for name, value in sorted(applied.items()))
    print(f"launch: CUDA_VISIBLE_DEVICES={visible} {presets} " + shlex.join(command),
          file=sys.stderr, flush=True)
    os.execvp(command[0], command)


if __name__ == "__main__":
    run_cli(main)
