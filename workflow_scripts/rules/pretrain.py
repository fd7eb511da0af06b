"""The `pretrain` rule: masked-LM pretraining of the classifier's encoder with torchrun (same
strategies, buckets and resources as `train`); writes the encoder.pt that `train` starts from.

`--config` holds the sections model, train and pretrain (pretrain's epochs, lr and max_steps
replace train's); `--genome-index` is the indexed genome, with pretrain.source genome only.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from workflow_scripts.config.types import parse_typed_config
from workflow_scripts.errors import run_cli
from workflow_scripts.training.entry import add_run_arguments, run_spec, start_run

SECTIONS = ("model", "train", "pretrain")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--genome-index", help="index.tsv of the indexed genome (pretrain.source genome)")
    add_run_arguments(
        parser, SECTIONS, out_weights="encoder.pt: the encoder's state dict", out_config="pretrain.json"
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    sections = parse_typed_config(args.config, required=SECTIONS)
    genome_dir = str(Path(args.genome_index).parent) if args.genome_index else None
    spec = run_spec(args, args.out_weights, genome_dir=genome_dir)
    start_run("masked_lm", args, sections, spec)


if __name__ == "__main__":
    run_cli(main)
