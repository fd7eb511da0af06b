"""The declaration of the rule annotate_sites (config/stage.py); its program: rules/annotate_sites.py."""

from __future__ import annotations

from workflow_scripts.config.stage import Input, Output, Stage

STAGE = Stage(
    "annotate_sites",
    "A GTF/GFF3 annotation -> sites.parquet and genes.parquet.",
    inputs=(Input("annotation", "GTF or GFF3, plain or gzip"),),
    outputs=(
        Output("sites", "sites parquet"),
        Output("genes", "gene spans parquet"),
        Output("exons", "the selected transcripts' exons (parquet; cluster_genes reads it)", required=False),
        Output("summary", "counts and GT/AG shares (JSON)", required=False),
    ),
    config={"calling": ("biotypes", "transcripts", "region")},
    genome=True,
)
