"""The declaration of the rule demo_data (config/stage.py); its program: rules/demo_data.py."""

from __future__ import annotations

from workflow_scripts.config.stage import WHOLE, Output, Stage

STAGE = Stage(
    "demo_data",
    "The demo's synthetic genome and calls.",
    outputs=(
        Output("genome", "output FASTA (.fa, or .fa.gz for gzip)"),
        Output("calls", "output calls TSV"),
    ),
    config={"demo": WHOLE},
)
