"""The declaration of the rule explain (config/stage.py); its program: rules/explain.py."""

from __future__ import annotations

from workflow_scripts.config.stage import WHOLE, Input, Output, Stage
from workflow_scripts.config.stages.shared import EXPERIMENT, MODEL, MODEL_CONFIG, OUT_DIR

STAGE = Stage(
    "explain",
    "What the model looks at: attributions, k-mers and their plots.",
    inputs=(Input("windows", "the windows (extract)"), MODEL, MODEL_CONFIG),
    outputs=(
        Output("attribution", "attribution.tsv"),
        Output("kmers", "kmers.tsv"),
        Output("plots", "the explain plots (artifacts.EXPLAIN_PLOTS), under --out-dir", passed=False),
    ),
    config={"explain": WHOLE},
    options=(OUT_DIR, EXPERIMENT),
)
