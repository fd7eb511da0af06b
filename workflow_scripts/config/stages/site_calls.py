"""The declaration of the rule site_calls (config/stage.py); its program: rules/site_calls.py."""

from __future__ import annotations

import dataclasses

from workflow_scripts import layout
from workflow_scripts.config.stage import WHOLE, Input, Output, Stage
from workflow_scripts.config.stages.shared import (
    ANNOTATION_SUMMARY,
    CONSOLE,
    GENE_CLUSTERS,
    GENES,
    GENOME_RECORD,
    MADE_BY,
    SCORE_RECORDS,
    SCORED_REGIONS,
    SCORES,
    SITE_CALLING,
    SITES,
)

TRANSFER = Input(
    "transfer", "sites.transfer: another genome's re-scorer folder", required=False, key="sites.transfer"
)

# sites.model: site_calls reads these of each run site_candidates_fold<i> (layout.FoldRunFiles),
# one path per fold, in fold order
FOLD_RUN_INPUTS = tuple(
    Input(f"fold_{field.name}", f"sites.model: each fold run's {file}", required=False, many=True)
    for field, file in zip(dataclasses.fields(layout.FoldRunFiles)[1:], layout.FOLD_RUN_FILES, strict=True)
)

STAGE = Stage(
    "site_calls",
    "Site-level re-scored calls: the base model, its tuned thresholds, a tree, k-mers, errorseq.",
    inputs=(
        SCORES,
        SITES,
        GENES,
        GENE_CLUSTERS,
        SCORED_REGIONS,
        GENOME_RECORD,
        ANNOTATION_SUMMARY,
        SCORE_RECORDS,
        MADE_BY,
        TRANSFER,
        *FOLD_RUN_INPUTS,
    ),
    outputs=(
        Output("calls", "corrected calls (parquet)"),
        Output("tree_bed", "BED of the tree's calls"),
        Output("base_bed", "BED of the base model's calls at calling.threshold"),
        Output("metrics", "site_metrics.json"),
        Output("rescorer", "re-scorer folder: tree and thresholds on all genes"),
        Output("errorseq_bed", "BED of errorseq's calls (sites.model)"),
        Output("corrected_bed", "BED of the recommended predictor's calls", required=False),
        Output("corrected_gff3", "GFF3 of the recommended predictor's calls", required=False),
    ),
    config={
        "calling": SITE_CALLING,
        "sites": WHOLE,
        "window": ("flank",),
        "evaluate": ("kmer_max_k", "batch_size"),
    },
    only_when={"evaluate.batch_size": "sites.model"},  # errorseq's val predictions
    options=(CONSOLE,),
    genome=True,
)
