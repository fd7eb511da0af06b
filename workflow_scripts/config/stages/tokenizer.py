"""The declaration of the rule tokenizer (config/stage.py); its program: rules/tokenizer.py."""

from __future__ import annotations

from workflow_scripts.config.stage import WHOLE, Input, Output, Stage

STAGE = Stage(
    "tokenizer",
    "The BPE tokenizer learnt on the training windows (tokenizer.kind bpe).",
    inputs=(Input("windows", "windows parquet (sequence, split)"),),
    outputs=(Output("tokenizer", "output Hugging Face tokenizer directory"),),
    config={"tokenizer": WHOLE, "split": WHOLE},
)
