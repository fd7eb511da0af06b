"""The declaration of the rule pretrain (config/stage.py); its program: rules/pretrain.py."""

from __future__ import annotations

from workflow_scripts.config.stage import WHOLE, Input, Output, Stage
from workflow_scripts.config.stages.shared import RUN_OPTIONS, RUN_OUTPUTS, TRAINING_INPUTS

STAGE = Stage(
    "pretrain",
    "Pretrain the experiment's encoder (pretrain.enabled) with torchrun.",
    inputs=(
        *TRAINING_INPUTS,
        Input("genome_index", "index.tsv of the indexed genome (pretrain.source genome)", required=False),
    ),
    outputs=(
        Output("weights", "encoder.pt: the encoder's state dict"),
        Output("config", "pretrain.json"),
        *RUN_OUTPUTS,
    ),
    config={"model": WHOLE, "train": WHOLE, "pretrain": WHOLE},
    optional_config=("cluster",),
    options=RUN_OPTIONS,
    per_run=True,
)
