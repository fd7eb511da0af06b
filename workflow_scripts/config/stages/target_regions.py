"""The declaration of the rule target_regions (config/stage.py); its program: rules/target_regions.py."""

from __future__ import annotations

from workflow_scripts.config.stage import Input, Output, Stage

STAGE = Stage(
    "target_regions",
    "calling.start regions: the spans to score (regions.parquet).",
    inputs=(
        Input(
            "regions",
            "calling.regions: a BED of the regions to score (default: every chromosome)",
            required=False,
        ),
    ),
    outputs=(Output("regions", "output: the spans to score (regions.parquet)"),),
    genome=True,
)
