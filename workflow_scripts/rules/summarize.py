"""The `summarize` rule: every run's model-vs-baselines results in one table, plot and page.

`--config` holds the sections experiments, split and train: the runs they make (config/runs.py)
give each metrics file its experiment, fold and seed, and an experiment with several runs its
mean ± sd rows. Without `experiments`, each metrics file is an experiment of its own.
"""

from __future__ import annotations

import argparse
import sys
from typing import cast

from workflow_scripts.artifacts import SUMMARY_MEAN, SUMMARY_RUN, SUMMARY_SD
from workflow_scripts.config.runs import expand_runs
from workflow_scripts.config.sections import add_config_argument, parse_rule_config
from workflow_scripts.errors import run_cli
from workflow_scripts.evaluation.summary import write_summary

SECTIONS = ("experiments", "split", "train")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--metrics", required=True, nargs="+", help="each run's evaluation/metrics.json")
    parser.add_argument("--out-table", required=True, help="summary.tsv (artifacts.summary_fields)")
    parser.add_argument("--out-plot", required=True, help="summary.png")
    parser.add_argument("--out-html", required=True, help="summary.html (the report's front page shows it)")
    add_config_argument(parser, *SECTIONS)
    return parser.parse_args(argv)


def run_line(row: dict) -> str:
    return (
        f"{row['experiment']}: model ROC-AUC {row['model_roc_auc']}, "
        f"vs base score: {row['verdict_base_score_roc_auc']}, vs k-mer: {row['verdict_kmer_roc_auc']}"
    )


def spread_line(mean: dict, sd: dict) -> str:
    parts = [f"model ROC-AUC {spread(mean, sd, 'model_roc_auc')}"] + [
        f"model - {name} {spread(mean, sd, f'model_minus_{name}_roc_auc')}" for name in ("base_score", "kmer")
    ]
    return f"{mean['experiment']}: {mean['runs']} runs, mean ± sd: " + ", ".join(parts)


def spread(mean: dict, sd: dict, column: str) -> str:
    if mean[column] is None:
        return "not scored"
    return f"{mean[column]:.3f} ± {sd[column]:.3f}" if sd[column] is not None else f"{mean[column]:.3f}"


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    sections = parse_rule_config(args.config, required=("split", "train"))
    runs = {}
    if "experiments" in sections:
        experiments = cast(list, sections["experiments"])  # the one section that is a list
        runs = expand_runs(experiments, sections["split"], sections["train"])
    table = write_summary(args.metrics, args.out_table, args.out_plot, args.out_html, runs)
    rows = table.to_dicts()
    sds = {row["group"]: row for row in rows if row["statistic"] == SUMMARY_SD}
    for row in rows:
        if row["statistic"] == SUMMARY_RUN:
            print(run_line(row), file=sys.stderr)
        elif row["statistic"] == SUMMARY_MEAN:
            print(spread_line(row, sds[row["group"]]), file=sys.stderr)


if __name__ == "__main__":
    run_cli(main)
