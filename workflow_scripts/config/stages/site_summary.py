"""The declaration of the rule site_summary (config/stage.py); its program: rules/site_summary.py."""

from __future__ import annotations

from workflow_scripts.config.stage import Input, Output, Stage

STAGE = Stage(
    "site_summary",
    "The report's site-calls page from site_metrics.json.",
    inputs=(Input("metrics", "site_metrics.json (site_calls)"),),
    outputs=(Output("html", "site_summary.html (the report shows it)"),),
)
