"""What the `train` and `pretrain` entry points share: their command line (the paths every
training run takes, --config and the rule's resources), its RunSpec, and the checks and launch
that start it."""

from __future__ import annotations

import argparse
import dataclasses
import os

from workflow_scripts.config.sections import add_config_argument
from workflow_scripts.training.console_relay import ConsoleRelay
from workflow_scripts.training.launch import Resources, launch
from workflow_scripts.training.objectives import build_objective
from workflow_scripts.training.prelaunch import announce, check_run, console_path
from workflow_scripts.training.run_spec import RunSpec


def add_run_arguments(
    parser: argparse.ArgumentParser, sections: tuple[str, ...], out_weights: str, out_config: str
) -> None:
    """The inputs, checkpoints, outputs, logs and wildcard of a run (train and pretrain share one
    rule body in Snakemake: rules/train.smk, `use rule train as pretrain`)."""
    parser.add_argument("--windows", required=True, help="windows parquet (extract)")
    parser.add_argument("--manifest", required=True, help="bucket manifest (bucket)")
    parser.add_argument("--bucket-summary", required=True, help="bucket summary.json (bucket)")
    parser.add_argument("--checkpoint-dir", required=True, help="resumable checkpoints")
    parser.add_argument("--out-weights", required=True, help=out_weights)
    parser.add_argument("--out-config", required=True, help=out_config)
    parser.add_argument("--out-steps", required=True, help="steps.jsonl")
    parser.add_argument("--experiment", required=True, help="the experiment wildcard")
    parser.add_argument(
        "--console-fd",
        type=int,
        help="a file descriptor for short progress lines (the rule: 3, Snakemake's stderr)",
    )
    add_config_argument(parser, *sections)
    add_resource_arguments(parser)


def add_resource_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--gpus", type=int, default=0, help="GPUs given to this job (resources.gpu)")
    parser.add_argument(
        "--cpu-procs", type=int, default=2, help="processes when there is no GPU (resources.cpu_procs)"
    )
    parser.add_argument(
        "--threads", type=int, default=os.cpu_count() or 1, help="CPU cores of the job (threads)"
    )
    parser.add_argument("--nodes", type=int, default=1, help="nodes of the job (resources.nodes)")


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
    """`sections` typed, completed by the schema (parse_typed_config): the objective is built from them
    once, here; refuse what every rank would fail on (before torchrun starts), then launch."""
    objective = build_objective(objective_name, sections)
    resources = resources_from_args(args)
    check_run(objective, spec, resources)
    announce(args.console_fd, f"{objective.rule} {args.experiment}")
    if spec.console is None or resources.nodes > 1:  # other nodes' ranks cannot reach this process
        launch(objective, spec, resources)
        return
    with ConsoleRelay(args.console_fd) as relay:
        launch(objective, dataclasses.replace(spec, console=relay.path), resources)
