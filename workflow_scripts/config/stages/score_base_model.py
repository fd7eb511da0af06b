"""The declaration of the rule score_base_model (config/stage.py); its program: rules/score_base_model.py."""

from __future__ import annotations

from workflow_scripts.config.stage import Input, Option, Output, Stage
from workflow_scripts.config.stages.shared import CONSOLE

STAGE = Stage(
    "score_base_model",
    "One shard of the genes scored by the base model (calling.base_model).",
    inputs=(
        Input("genes", "gene spans (genes.parquet: gene_id, chrom, start, end, strand)"),
        Input(
            "weights",
            "SpliceAI .h5 or OpenSpliceAI .pt models, or one directory of them",
            many=True,
            key="calling.base_model.weights",
        ),
    ),
    outputs=(
        Output("scores", "output scores parquet"),
        Output(
            "regions",
            "the shard's record: its shard and regions (JSON; calling/shards.py)",
            required=False,
        ),
    ),
    config={"calling": ("base_model",)},
    options=(
        Option("shard", "which shard to score, 1..--shards", type=int, default=1),
        Option("shards", "how many shards the genes are split into", type=int, default=1),
        CONSOLE,
    ),
    genome=True,
)
