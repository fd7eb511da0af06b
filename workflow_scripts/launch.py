"""Start training with torchrun, one process per GPU (or a set number of CPU processes).

    python -m workflow_scripts.launch --gpus 0 --cpu-procs 2 --threads 2 -- <train arguments>

The process count comes from the rule's resources, never from CUDA_VISIBLE_DEVICES alone.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys

import torch

from workflow_scripts.errors import InputError, run_cli

TRAIN_MODULE = "workflow_scripts.train"


def parse_args(argv: list[str] | None) -> tuple[argparse.Namespace, list[str]]:
    argv = list(sys.argv[1:] if argv is None else argv)
    split_at = argv.index("--") if "--" in argv else len(argv)
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--gpus", type=int, default=0, help="GPUs given to this job (resources.gpu)")
    parser.add_argument("--cpu-procs", type=int, default=2, help="processes when there is no GPU")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="CPU cores of the job")
    parser.add_argument("--module", default=TRAIN_MODULE)
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


def torchrun_command(nproc: int, module: str, train_args: list[str]) -> list[str]:
    return [
        sys.executable, "-m", "torch.distributed.run",
        "--standalone", f"--nproc_per_node={nproc}", "--max_restarts=0",
        "-m", module, *train_args,
    ]


def main(argv: list[str] | None = None) -> None:
    args, train_args = parse_args(argv)
    nproc = processes_per_node(args.gpus, args.cpu_procs)
    if args.gpus > 0 and not torch.cuda.is_available():
        print(f"warning: {args.gpus} GPUs requested but CUDA is not available; "
              f"running {nproc} CPU processes with gloo", file=sys.stderr)
    os.environ["OMP_NUM_THREADS"] = str(max(1, args.threads // nproc))
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    command = torchrun_command(nproc, args.module, train_args)
    print("launch: " + shlex.join(command), file=sys.stderr, flush=True)
    os.execv(command[0], command)


if __name__ == "__main__":
    run_cli(main)
