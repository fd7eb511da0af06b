"""The declaration of the rule cluster_genes (config/stage.py); its program: rules/cluster_genes.py."""

from __future__ import annotations

from workflow_scripts.config.stage import Input, Output, Stage
from workflow_scripts.config.stages.shared import GENES

STAGE = Stage(
    "cluster_genes",
    "The annotation's genes -> paralog clusters (gene_clusters.parquet).",
    inputs=(Input("exons", "exons.parquet (annotate_sites)"), GENES),
    outputs=(Output("gene_clusters", "gene clusters parquet"),),
    config={"calling": ("paralogs",)},
    genome=True,
)
