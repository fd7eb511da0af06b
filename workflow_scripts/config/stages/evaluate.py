"""The declaration of the rule evaluate (config/stage.py); its program: rules/evaluate.py."""

from __future__ import annotations

from workflow_scripts.config.stage import WHOLE, Output, Stage
from workflow_scripts.config.stages.shared import EXPERIMENT, MODEL, MODEL_CONFIG, RUN_MANIFEST, RUN_WINDOWS

STAGE = Stage(
    "evaluate",
    "Predict the test split, compare the model with its baselines: predictions and metrics.",
    inputs=(RUN_WINDOWS, RUN_MANIFEST, MODEL, MODEL_CONFIG),
    outputs=(Output("predictions", "predictions.parquet"), Output("metrics", "metrics.json")),
    config={"evaluate": WHOLE, "train": WHOLE},
    options=(EXPERIMENT,),
    per_run=True,
)
