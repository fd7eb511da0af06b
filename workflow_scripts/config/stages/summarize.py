"""The declaration of the rule summarize (config/stage.py); its program: rules/summarize.py."""

from __future__ import annotations

from workflow_scripts.config.stage import WHOLE, Input, Output, Stage
from workflow_scripts.config.stages.shared import (
    ANNOTATION_SUMMARY,
    CONSOLE,
    GENOME_RECORD,
    MADE_BY,
    SCORE_RECORDS,
)

PROVENANCE_CALLING = ("threshold", "consensus_window", "negatives", "biotypes", "transcripts")

STAGE = Stage(
    "summarize",
    "Every run's model-vs-baselines results in one table, plot and page.",
    inputs=(
        Input("metrics", "each run's evaluation/metrics.json", many=True),
        Input("calls_summary", "make_calls' summary (the pipeline made the calls)", required=False),
        GENOME_RECORD,
        ANNOTATION_SUMMARY,
        SCORE_RECORDS,
        Input(
            "calls", "calling.start calls: the calls table given (hashed for the provenance)", required=False
        ),
        Input("scores", "calling.start scores: the scores table given (hashed)", required=False, many=True),
        Input("sequences", "the sequences table given (hashed)", required=False),
        MADE_BY,
        Input(
            "config_files",
            "the config files Snakemake merged (config/config.yaml, each --configfile): names and sha256",
            required=False,
            many=True,
        ),
    ),
    outputs=(
        Output("table", "summary.tsv (artifacts.summary_fields)"),
        Output("plot", "summary.png"),
        Output("html", "summary.html (the report's front page shows it)"),
        Output("provenance", "provenance.json (evaluation/provenance.py)", required=False),
    ),
    # calling: the settings the provenance records (evaluation/provenance.py CALLING_SETTINGS)
    config={"experiments": WHOLE, "split": WHOLE, "train": WHOLE, "calling": PROVENANCE_CALLING},
    optional_config=("experiments",),
    options=(CONSOLE,),
)
