"""The `train` rule: train the experiment's classifier with torchrun, one worker per GPU (or
`--cpu-procs` CPU processes with gloo when `--gpus` is 0).

`--config` holds the sections model and train (cluster too, else the workflow's
ERRORSEQ_CLUSTER_ENV); `--gpus`, `--cpu-procs`, `--threads` and `--nodes` are the rule's resources.
`--init-encoder` is the pretrain rule's encoder.pt, when pretrain.enabled.
"""

from __future__ import annotations

import argparse

from workflow_scripts.config.types import parse_typed_config
from workflow_scripts.errors import run_cli
from workflow_scripts.training.entry import add_run_arguments, run_spec, start_run

SECTIONS = ("model", "train")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--init-encoder", help="encoder.pt written by pretrain: start from it")
    add_run_arguments(
        parser, SECTIONS, out_weights="model.pt: the best epoch's plain state dict", out_config="model.json"
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    sections = parse_typed_config(args.config, required=SECTIONS)
    spec = run_spec(args, args.out_weights, init_encoder=args.init_encoder)
    start_run("classification", args, sections, spec)


if __name__ == "__main__":
    run_cli(main)
