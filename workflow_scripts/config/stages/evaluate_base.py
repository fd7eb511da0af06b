"""The declaration of the rule evaluate_base (config/stage.py); its program: rules/evaluate_base.py."""

from __future__ import annotations

from workflow_scripts.config.stage import Input, Output, Stage
from workflow_scripts.config.stages.shared import CONSOLE

STAGE = Stage(
    "evaluate_base",
    "Base models on base_data's held-out test blocks: OpenSpliceAI's metrics, JSON and a figure.",
    inputs=(
        Input("blocks", "blocks.parquet (base_data)"),
        Input("bases", "sequence.npy (base_data); not `sequence`, the genome index's input name"),
        Input("labels", "labels.npy (base_data)"),
        Input("manifest", "manifest.json (base_data): the blocks' half context"),
        Input(
            "weights",
            "the models' .pt files, one model per folder, the first folder the reference",
            many=True,
        ),
    ),
    outputs=(
        Output("metrics", "metrics.json: each model's metrics and its differences from the first"),
        Output("plot", "metrics.png: top-k accuracy and AUPRC per site type and model"),
    ),
    config={
        "evaluate_base": (
            "device",
            "max_blocks",
            "validation_blocks",
            "threshold",
            "window",
            "peak_radius",
            "bootstrap_replicates",
            "seed",
        )
    },
    options=(CONSOLE,),
)
