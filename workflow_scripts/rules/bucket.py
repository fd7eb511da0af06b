"""The `bucket` rule: each window's token-length bucket (manifest) and the padding report (summary).

`--config` holds the sections bucket, tokenizer and model (the model picks the tokenizer when
tokenizer.kind is auto). `--tokenizer` is the tokenizer rule's output, with kind bpe only.
"""

from __future__ import annotations

import argparse
import sys

from workflow_scripts.bucketing.assign import BucketSettings, bucket_windows
from workflow_scripts.config.sections import add_config_argument
from workflow_scripts.config.types import parse_typed_config
from workflow_scripts.errors import run_cli
from workflow_scripts.io_utils import write_json, write_parquet
from workflow_scripts.tokenization.tokenizers import tokenizer_from_config

SECTIONS = ("bucket", "tokenizer", "model")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--windows", required=True, help="windows parquet (id, split, label, length, sequence)"
    )
    parser.add_argument("--tokenizer", help="the learnt BPE tokenizer (tokenizer.kind bpe)")
    parser.add_argument("--out-manifest", required=True)
    parser.add_argument("--out-summary", required=True)
    add_config_argument(parser, *SECTIONS)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    sections = parse_typed_config(args.config, required=SECTIONS)
    tokenizer = tokenizer_from_config(sections["tokenizer"], sections["model"], args.tokenizer)
    settings = BucketSettings.from_config(sections["bucket"], tokenizer)
    manifest, summary, report = bucket_windows(args.windows, settings)
    print(report, file=sys.stderr)
    write_parquet(manifest, args.out_manifest)
    write_json(args.out_summary, summary)


if __name__ == "__main__":
    run_cli(main)
