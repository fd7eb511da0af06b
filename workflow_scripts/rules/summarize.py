"""The `summarize` rule: every experiment's model-vs-baselines results in one table, plot and page."""

from __future__ import annotations

import argparse
import sys

from workflow_scripts.errors import run_cli
from workflow_scripts.evaluation.summary import write_summary


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--metrics", required=True, nargs="+", help="each experiment's evaluation/metrics.json"
    )
    parser.add_argument("--out-table", required=True, help="summary.tsv (artifacts.summary_fields)")
    parser.add_argument("--out-plot", required=True, help="summary.png")
    parser.add_argument("--out-html", required=True, help="summary.html (the report's front page shows it)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    table = write_summary(args.metrics, args.out_table, args.out_plot, args.out_html)
    for row in table.iter_rows(named=True):
        print(
            f"{row['experiment']}: model ROC-AUC {row['model_roc_auc']}, "
            f"vs base score: {row['verdict_base_score_roc_auc']}, vs k-mer: {row['verdict_kmer_roc_auc']}",
            file=sys.stderr,
        )


if __name__ == "__main__":
    run_cli(main)
