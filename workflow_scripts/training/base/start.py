"""The train_base job's own process: check what every rank would fail on alike, write the launch
file, then become torchrun (training/launch.py: one node in this process, several through srun)
with one `training.base.worker` per GPU or CPU process."""

from __future__ import annotations

import os

import torch

from workflow_scripts.config.train_base import TrainBaseSection
from workflow_scripts.errors import InputError
from workflow_scripts.training.base.blocks import load_blocks, read_manifest
from workflow_scripts.training.base.network import build_network, units_for
from workflow_scripts.training.base.run_files import BaseRun, write_launch_file
from workflow_scripts.training.cluster_env import (
    apply_environment,
    export_section,
    preset_environment,
    section_from_environment,
)
from workflow_scripts.training.console_relay import ConsoleRelay
from workflow_scripts.training.launch import Resources, build_command, start_command, torchrun_in_this_process
from workflow_scripts.training.precision import check_precision
from workflow_scripts.training.prelaunch import announce, check_writable, console_path

BASE_WORKER = "workflow_scripts.training.base.worker"


def check_run(run: BaseRun, section: TrainBaseSection, resources: Resources) -> None:
    """What every rank would fail on alike, in one line before torchrun starts them: the settings,
    the precision on this device, base_data's manifest against the model's flank, the start weights."""
    units_for(section.context)
    section.check()
    check_precision(section.strategy, section.precision, resources.gpus > 0 and torch.cuda.is_available())
    data_context = int(read_manifest(run.data)["context"])
    if section.context > data_context:
        raise InputError(
            run.data.manifest,
            "context",
            f"the blocks carry {data_context} nt of context; train_base.context {section.context} needs more "
            "(base_data.context)",
        )
    load_blocks(run.data, "train", section.context)  # columns, dtypes, offsets
    validation = load_blocks(run.data, "validation", section.context)
    if section.export != "last" and not len(validation):
        raise InputError(
            run.data.blocks, "split", f"no validation blocks: train_base.export {section.export} needs them"
        )
    if run.init_weights is not None:
        build_network(section.context, run.init_weights, run.seed)  # every tensor's name and shape
    if section.l2sp > 0 and run.init_weights is None:
        raise InputError(
            "config", "train_base.l2sp", "pulls toward start weights: set train_base.init_weights"
        )


def start(
    run: BaseRun,
    section: TrainBaseSection,
    cluster: dict | None,
    resources: Resources,
    console_fd: int | None,
) -> None:
    """Never returns: torchrun (or srun) takes this process over."""
    check_run(run, section, resources)
    for folder in {run.run_dir, os.path.dirname(run.out_model) or "."}:
        check_writable(folder)
    cluster = cluster if cluster is not None else section_from_environment()
    export_section(cluster)
    applied = apply_environment(preset_environment(cluster))
    announce(console_fd, f"train_base rs{run.seed}")
    console = console_path(console_fd)
    command = build_command(resources, ["--launch-file", str(run.launch_file)], cluster, BASE_WORKER)
    if console is None or not torchrun_in_this_process(resources):  # srun: no relay lives on
        write_launch_file(run, section, cluster)
        start_command(command, applied)
    assert console_fd is not None
    with ConsoleRelay(console_fd) as relay:
        write_launch_file(BaseRun(**{**vars(run), "console": relay.path}), section, cluster)
        start_command(command, applied)
