"""The `bucket` rule: each window's token-length bucket (manifest) and the padding report (summary).

`--config` holds the sections bucket, tokenizer and model (the model picks the tokenizer when
tokenizer.kind is auto). `--tokenizer` is the tokenizer rule's output, with kind bpe only.
"""

from __future__ import annotations

import sys

from workflow_scripts.bucketing.assign import BucketSettings, bucket_windows
from workflow_scripts.config.stages.bucket import STAGE
from workflow_scripts.errors import run_cli
from workflow_scripts.io_utils import write_json, write_parquet
from workflow_scripts.tokenization.tokenizers import tokenizer_from_config


def main(argv: list[str] | None = None) -> None:
    paths, cfg = STAGE.parse(argv)
    tokenizer = tokenizer_from_config(cfg.tokenizer, cfg.model, paths.tokenizer)
    settings = BucketSettings.from_config(cfg.bucket, tokenizer)
    manifest, summary, report = bucket_windows(paths.windows, settings)
    print(report, file=sys.stderr)
    write_parquet(manifest, paths.out_manifest)
    write_json(paths.out_summary, summary)


if __name__ == "__main__":
    run_cli(main)
