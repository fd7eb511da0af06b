"""The declaration of the rule rescore_sites (config/stage.py); its program: rules/rescore_sites.py."""

from __future__ import annotations

from workflow_scripts.config.stage import WHOLE, Input, Output, Stage
from workflow_scripts.config.stages.shared import CONSOLE, GENOME_RECORD, SCORE_RECORDS, SITE_CALLING

STAGE = Stage(
    "rescore_sites",
    "calling.start regions: another genome's re-scorer applied to the scored regions (none: the base's calls).",
    inputs=(
        Input("scores", "scores tables (score_base_model's shards)", many=True),
        Input("regions", "the scored regions (target_regions: regions.parquet)"),
        GENOME_RECORD,
        SCORE_RECORDS,
        Input(
            "transfer",
            "sites.transfer: another genome's re-scorer folder (unset: the base model's calls)",
            required=False,
            key="sites.transfer",
        ),
    ),
    outputs=(
        Output("calls", "every candidate and its calls (parquet)"),
        Output("bed", "BED of the corrected calls"),
        Output("gff3", "GFF3 of the corrected calls"),
        Output("report", "JSON: no metrics; calls per type and region, the recommendation, provenance"),
        Output("html", "rescored.html: the same as a page for snakemake --report (sites/rescore_report.py)"),
    ),
    config={"calling": SITE_CALLING, "sites": WHOLE, "evaluate": ("batch_size",)},
    genome=True,
    options=(CONSOLE,),
)
