"""The declaration of the rule train (config/stage.py); its program: rules/train.py."""

from __future__ import annotations

from workflow_scripts.config.stage import WHOLE, Input, Output, Stage
from workflow_scripts.config.stages.shared import RUN_OPTIONS, RUN_OUTPUTS, TRAINING_INPUTS

STAGE = Stage(
    "train",
    "Train the experiment's classifier with torchrun.",
    inputs=(
        *TRAINING_INPUTS,
        Input("init_encoder", "encoder.pt written by pretrain: start from it", required=False),
    ),
    outputs=(
        Output("weights", "model.pt: the best epoch's plain state dict"),
        Output("config", "model.json"),
        *RUN_OUTPUTS,
    ),
    config={"model": WHOLE, "train": WHOLE},
    optional_config=("cluster",),
    options=RUN_OPTIONS,
    per_run=True,
)
