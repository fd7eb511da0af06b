"""The declaration of the rule predict_calls (config/stage.py); its program: rules/predict_calls.py."""

from __future__ import annotations

from workflow_scripts.config.stage import WHOLE, Input, Output, Stage
from workflow_scripts.config.stages.shared import MODEL, MODEL_CONFIG

STAGE = Stage(
    "predict_calls",
    "A trained run's predictions for predict.calls.",
    inputs=(
        Input("calls", "calls table: .tsv/.tsv.gz/.txt/.csv/.parquet"),
        MODEL,
        MODEL_CONFIG,
        Input("metrics", "metrics.json written by evaluate (the threshold)"),
    ),
    outputs=(Output("predictions", "output parquet"),),
    config={"experiment": WHOLE, "predict": WHOLE, "window": WHOLE, "evaluate": WHOLE},
    genome=True,
    per_run=True,
)
