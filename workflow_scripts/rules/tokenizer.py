"""The `tokenizer` rule: learn a DNA BPE tokenizer on the train windows (tokenizer.kind bpe).

`--config` holds the sections tokenizer (vocab_size, min_frequency, max_windows) and split (its
seed draws the sample of train windows when there are more than max_windows).
"""

from __future__ import annotations

import argparse
import sys

from workflow_scripts.config.sections import add_config_argument
from workflow_scripts.config.types import parse_typed_config
from workflow_scripts.errors import run_cli
from workflow_scripts.tokenization.bpe import learn_tokenizer

SECTIONS = ("tokenizer", "split")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--windows", required=True, help="windows parquet (sequence, split)")
    parser.add_argument("--out-tokenizer", required=True, help="output Hugging Face tokenizer directory")
    add_config_argument(parser, *SECTIONS)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    sections = parse_typed_config(args.config, required=SECTIONS)
    report = learn_tokenizer(args.windows, sections["tokenizer"], sections["split"].seed, args.out_tokenizer)
    print(report, file=sys.stderr)


if __name__ == "__main__":
    run_cli(main)
