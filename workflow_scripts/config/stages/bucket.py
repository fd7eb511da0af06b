"""The declaration of the rule bucket (config/stage.py); its program: rules/bucket.py."""

from __future__ import annotations

from workflow_scripts.config.stage import WHOLE, Input, Output, Stage

STAGE = Stage(
    "bucket",
    "Each window's token-length bucket (manifest) and the padding report (summary).",
    inputs=(
        Input("windows", "windows parquet (id, split, label, length, sequence)"),
        Input("tokenizer", "the learnt BPE tokenizer (tokenizer.kind bpe)", required=False),
    ),
    outputs=(Output("manifest", "bucket manifest parquet"), Output("summary", "padding report (JSON)")),
    config={"bucket": WHOLE, "tokenizer": WHOLE, "model": WHOLE},
)
