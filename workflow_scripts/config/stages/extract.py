"""The declaration of the rule extract (config/stage.py); its program: rules/extract.py."""

from __future__ import annotations

from workflow_scripts.config.stage import WHOLE, Input, Output, Stage

STAGE = Stage(
    "extract",
    "One experiment's labelled windows, split by gene, as windows.parquet.",
    inputs=(
        Input("sequences", "ready-made windows table (sequence, label[, gene_id, id])", required=False),
        Input("calls", "calls table: .tsv/.tsv.gz/.txt/.csv/.parquet", required=False),
        Input(
            "scores",
            "calls mode: the scores tables the calls were made from (profiles)",
            required=False,
            many=True,
        ),
        Input("genes", "genes.parquet (annotate_sites): the spans the scores are read in", required=False),
    ),
    outputs=(Output("windows", "output windows parquet"),),
    config={"experiment": WHOLE, "window": WHOLE, "split": WHOLE},
    genome=True,
    genome_optional=True,  # --sequences: ready-made windows
    per_run=True,
)
