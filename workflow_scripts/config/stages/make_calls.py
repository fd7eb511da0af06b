"""The declaration of the rule make_calls (config/stage.py); its program: rules/make_calls.py."""

from __future__ import annotations

from workflow_scripts.config.stage import Input, Output, Stage
from workflow_scripts.config.stages.shared import GENES, SCORES, SITES

STAGE = Stage(
    "make_calls",
    "The base model's scores and the annotation -> the calls table.",
    inputs=(
        SCORES,
        SITES,
        GENES,
        Input(
            "gene_clusters",
            "gene_clusters.parquet (cluster_genes): carried into the calls",
            required=False,
        ),
    ),
    outputs=(
        Output("calls", "calls parquet"),
        Output("summary", "counts per splice type and call, TN report (JSON)", required=False),
    ),
    config={"calling": ("threshold", "consensus_window", "negatives")},
    genome=True,
)
