"""The `train` rule: train the experiment's classifier with torchrun, one worker per GPU (or
`--cpu-procs` CPU processes with gloo when `--gpus` is 0).

`--config` holds the sections model and train (cluster too, else the workflow's
ERRORSEQ_CLUSTER_ENV); `--gpus`, `--cpu-procs`, `--threads` and `--nodes` are the rule's resources.
`--init-encoder` is the pretrain rule's encoder.pt, when pretrain.enabled.
"""

from __future__ import annotations

import argparse

from workflow_scripts.config.sections import add_config_argument, parse_rule_config
from workflow_scripts.errors import run_cli
from workflow_scripts.training.launch import add_resource_arguments, launch, resources_from_args
from workflow_scripts.training.objectives import build_objective
from workflow_scripts.training.prelaunch import announce, check_run, console_path
from workflow_scripts.training.run_spec import RunSpec

SECTIONS = ("model", "train")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--windows", required=True, help="windows parquet (extract)")
    parser.add_argument("--manifest", required=True, help="bucket manifest (bucket)")
    parser.add_argument("--bucket-summary", required=True, help="bucket summary.json (bucket)")
    parser.add_argument("--init-encoder", help="encoder.pt written by pretrain: start from it")
    parser.add_argument("--checkpoint-dir", required=True, help="resumable checkpoints")
    parser.add_argument("--out-model", required=True, help="model.pt: the best epoch's plain state dict")
    parser.add_argument("--out-config", required=True, help="model.json")
    parser.add_argument("--out-steps", required=True, help="steps.jsonl")
    parser.add_argument("--experiment", required=True, help="the experiment wildcard")
    parser.add_argument(
        "--console-fd",
        type=int,
        help="a file descriptor for short progress lines (the rule: 3, Snakemake's stderr)",
    )
    add_config_argument(parser, *SECTIONS)
    add_resource_arguments(parser)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    sections = parse_rule_config(args.config, required=SECTIONS)
    spec = RunSpec(
        experiment=args.experiment,
        console=console_path(args.console_fd),
        windows=args.windows,
        manifest=args.manifest,
        bucket_summary=args.bucket_summary,
        checkpoint_dir=args.checkpoint_dir,
        out_weights=args.out_model,
        out_config=args.out_config,
        out_steps=args.out_steps,
        init_encoder=args.init_encoder,
    )
    resources = resources_from_args(args)
    check_run(build_objective("classification", sections), spec, resources)  # before torchrun starts
    announce(args.console_fd, f"train {args.experiment}")
    launch("classification", spec, sections, resources)


if __name__ == "__main__":
    run_cli(main)
