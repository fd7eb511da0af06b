"""The declaration of the rule summarize (config/stage.py); its program: rules/summarize.py."""

from __future__ import annotations

from workflow_scripts.config.stage import WHOLE, Input, Option, Output, Stage
from workflow_scripts.config.stages.shared import CONSOLE

STAGE = Stage(
    "summarize",
    "Every run's model-vs-baselines results in one table, plot and page.",
    inputs=(
        Input("metrics", "each run's evaluation/metrics.json", many=True),
        Input("calls_summary", "make_calls' summary (the pipeline made the calls)", required=False),
    ),
    outputs=(
        Output("table", "summary.tsv (artifacts.summary_fields)"),
        Output("plot", "summary.png"),
        Output("html", "summary.html (the report's front page shows it)"),
        Output("provenance", "provenance.json (needs --provenance)", required=False),
    ),
    config={"experiments": WHOLE, "split": WHOLE, "train": WHOLE},
    optional_config=("experiments",),
    options=(Option("provenance", "JSON: evaluation/provenance.py's workflow_facts"), CONSOLE),
)
