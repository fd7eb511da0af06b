"""The declaration of the rule site_windows (config/stage.py); its program: rules/site_windows.py."""

from __future__ import annotations

from workflow_scripts.config.stage import WHOLE, Output, Stage
from workflow_scripts.config.stages.shared import (
    CONSOLE,
    GENE_CLUSTERS,
    GENES,
    SCORED_REGIONS,
    SCORES,
    SITE_CALLING,
    SITES,
)

STAGE = Stage(
    "site_windows",
    "site_calls' candidates as windows, one windows.parquet per fold (sites.model).",
    inputs=(SCORES, SITES, GENES, GENE_CLUSTERS, SCORED_REGIONS),
    outputs=(Output("windows", "the windows of folds 1..sites.folds, in fold order", many=True),),
    # what the candidates and their folds depend on: another sites key does not retrain
    config={
        "calling": SITE_CALLING,
        "sites": ("floor", "peak_radius", "folds", "seed"),
        "window": WHOLE,
        "split": ("fractions",),
    },
    options=(CONSOLE,),
    genome=True,
)
