"""What the train and pretrain entry points do before torchrun starts N ranks that would each fail
the same way later: refuse output folders that cannot be written (read-only, full, no
permission: one line naming the folder), refuse a DeepSpeed JSON that DeepSpeed would not take or
that contradicts errorseq's batch, precision or ZeRO settings (one line naming the file and the
key), and point the console at the full log.

The console is a file descriptor the rule opens on Snakemake's own stderr (`3>&2` before the
redirection of the job's output to its log). torchrun starts the ranks without it: on one node
they write into a FIFO that this process copies onto the descriptor (training/console_relay.py);
across nodes, rank 0 reaches it through /proc/<this pid>/fd/<fd> where it runs on this node.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import torch

from workflow_scripts.config.train import TrainConfig
from workflow_scripts.training.launch import Resources, gpus_per_node, processes_per_node
from workflow_scripts.training.precision import check_precision
from workflow_scripts.training.run_spec import RunSpec
from workflow_scripts.training.telemetry import require_tensorboard

PROBE_BYTES = 4096


def check_run(cfg: TrainConfig, spec: RunSpec, resources: Resources) -> None:
    """What launch checks too (precision, tensorboard, GPUs), the DeepSpeed JSON, then the output
    folders' file system. Creates nothing: a refused run leaves no folder behind."""
    check_before_launch(cfg, cuda=resources.gpus > 0 and torch.cuda.is_available())
    world = world_size(resources)
    if cfg.strategy == "deepspeed" and cfg.deepspeed_config:
        check_deepspeed_json(cfg, spec, resources, world)
    for folder in sorted(output_folders(spec)):
        check_writable(folder)


def check_before_launch(cfg: TrainConfig, cuda: bool) -> None:
    """What every rank would otherwise fail on alike: precision the workers' device lacks, a
    missing tensorboard package (the ranges and keys were checked when the config was parsed)."""
    check_precision(cfg.strategy, cfg.precision, cuda)
    if cfg.tensorboard:
        require_tensorboard()


def output_folders(spec: RunSpec) -> set[str]:
    outputs = (spec.out_weights, spec.out_config, spec.out_steps)
    return {spec.checkpoint_dir} | {str(Path(path).parent) for path in outputs}


def check_writable(folder: str) -> None:
    """Write (and flush) a few KB in `folder`, or in its nearest existing parent where it is yet
    to be made; an OSError names `folder`."""
    existing = Path(folder).absolute()
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    try:
        descriptor, probe = tempfile.mkstemp(prefix=".errorseq-probe-", dir=existing)
        try:
            os.write(descriptor, b"\0" * PROBE_BYTES)
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
            os.unlink(probe)
    except OSError as error:
        raise OSError(error.errno, error.strerror, folder) from None


def world_size(resources: Resources) -> int:
    per_node = processes_per_node(gpus_per_node(resources.gpus, resources.nodes), resources.cpu_procs)
    return per_node * resources.nodes


def check_deepspeed_json(cfg: TrainConfig, spec: RunSpec, resources: Resources, world: int) -> None:
    """The user's DeepSpeed JSON merged and checked as the ranks will (the batch from the bucket
    summary and the world size), then parsed by DeepSpeed itself."""
    from workflow_scripts.training.strategies import deepspeed_config

    hardware = deepspeed_config.detect_hardware() if resources.gpus > 0 else deepspeed_config.CPU_ONLY
    summary = json.loads(Path(spec.bucket_summary).read_text())
    merged = deepspeed_config.build(
        cfg, world_size=world, micro_batch=max(summary["batch_sizes"]), hardware=hardware
    )
    deepspeed_config.check_with_deepspeed(merged, cfg.deepspeed_config or "")


def console_path(descriptor: int | None) -> str | None:
    """/proc/<pid>/fd/<descriptor> where that descriptor is open, else None (no console)."""
    if descriptor is None:
        return None
    try:
        os.fstat(descriptor)
    except OSError:
        return None
    return f"/proc/{os.getpid()}/fd/{descriptor}"


def announce(descriptor: int | None, label: str) -> None:
    """The console's first line: where the full log is (this process's stdout, when a file)."""
    if descriptor is None or console_path(descriptor) is None:
        return
    log = os.path.realpath("/proc/self/fd/1")
    follow = f"; the full log: tail -f {os.path.relpath(log)}" if os.path.isfile(log) else ""
    try:
        os.write(descriptor, f"{label}: starting torchrun{follow}\n".encode())
    except OSError:
        pass
