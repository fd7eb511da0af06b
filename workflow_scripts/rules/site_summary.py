"""The `site_summary` rule: site_calls' results (site_metrics.json) as the report's site-calls
section, an HTML fragment: the answer, every predictor's precision, recall, F1 and PR-AUC, every
compared pair's F1 difference with its interval, and where the results came from
(workflow_scripts/sites/summary.py).
"""

from __future__ import annotations

import json
from pathlib import Path

from workflow_scripts.config.stages.site_summary import STAGE
from workflow_scripts.errors import InputError, run_cli
from workflow_scripts.io_utils import write_text
from workflow_scripts.sites.summary import summary_html


def main(argv: list[str] | None = None) -> None:
    paths, _ = STAGE.parse(argv)
    try:
        report = json.loads(Path(paths.metrics).read_text())
        html = summary_html(report)
    except (json.JSONDecodeError, KeyError, TypeError) as error:
        raise InputError(
            paths.metrics, "site_metrics", f"not site_calls' site_metrics.json ({error!r})"
        ) from None
    write_text(paths.out_html, html)


if __name__ == "__main__":
    run_cli(main)
