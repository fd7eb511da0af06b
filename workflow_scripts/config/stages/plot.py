"""The declaration of the rule plot (config/stage.py); its program: rules/plot.py."""

from __future__ import annotations

from workflow_scripts.config.stage import Input, Output, Stage
from workflow_scripts.config.stages.shared import OUT_DIR

STAGE = Stage(
    "plot",
    "One run's plots (artifacts.PLOTS).",
    inputs=(
        Input("predictions", "the test predictions (evaluate)"),
        Input("metrics", "evaluation/metrics.json"),
        Input("steps", "model/steps.jsonl"),
        Input("bucket_summary", "buckets/summary.json"),
        Input("manifest", "the bucket manifest (bucket)"),
    ),
    outputs=(Output("plots", "the PNG files (artifacts.PLOTS), under --out-dir", passed=False),),
    options=(OUT_DIR,),
)
