"""What the `train` and `pretrain` entry points share once their command line is parsed (their
declarations, config/stages/): its RunSpec, the rule's resources, and the checks and launch
that start it."""

from __future__ import annotations

import argparse
import dataclasses

from workflow_scripts.training.console_relay import ConsoleRelay
from workflow_scripts.training.launch import Resources, cluster_section, launch, torchrun_in_this_process
from workflow_scripts.training.objectives import OBJECTIVES
from workflow_scripts.training.prelaunch import announce, check_run, console_path
from workflow_scripts.training.run_spec import RunSpec, write_launch_file


def resources_from_args(args: argparse.Namespace) -> Resources:
    return Resources(args.gpus, args.cpu_procs, args.threads, args.nodes)


def run_spec(args: argparse.Namespace, out_weights: str, **extra: str | None) -> RunSpec:
    return RunSpec(
        experiment=args.experiment,
        console=console_path(args.console_fd),
        windows=args.windows,
        manifest=args.manifest,
        bucket_summary=args.bucket_summary,
        checkpoint_dir=args.checkpoint_dir,
        out_weights=out_weights,
        out_config=args.out_config,
        out_steps=args.out_steps,
        **extra,
    )


def start_run(objective_name: str, args: argparse.Namespace, sections: dict, spec: RunSpec) -> None:
    """`sections` typed, completed by the schema (parse_typed_config): refuse what every rank would
    fail on (before torchrun starts), write the launch file (the ranks build the objective from
    it), then launch."""
    resources = resources_from_args(args)
    check_run(sections["train"], spec, resources)
    announce(args.console_fd, f"{OBJECTIVES[objective_name].rule} {args.experiment}")
    cluster = cluster_section(sections.get("cluster"))
    if spec.console is None or not torchrun_in_this_process(resources):  # srun: no relay lives on
        write_launch_file(objective_name, sections, spec)
        launch(cluster, spec.launch_file, resources)
        return
    with ConsoleRelay(args.console_fd) as relay:
        relayed = dataclasses.replace(spec, console=relay.path)
        write_launch_file(objective_name, sections, relayed)
        launch(cluster, relayed.launch_file, resources)
