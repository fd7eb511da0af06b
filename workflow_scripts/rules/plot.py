"""The `plot` rule: ROC, precision-recall, confusion matrix, training curves, length histogram."""

from __future__ import annotations

import argparse

from workflow_scripts.errors import run_cli
from workflow_scripts.evaluation.plots import PlotInputPaths, write_plots


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--predictions", required=True, help="evaluation/predictions.parquet")
    parser.add_argument("--metrics", required=True, help="evaluation/metrics.json")
    parser.add_argument("--steps", required=True, help="model/steps.jsonl")
    parser.add_argument("--bucket-summary", required=True, help="buckets/summary.json")
    parser.add_argument("--manifest", required=True, help="buckets/manifest.parquet")
    parser.add_argument("--out-dir", required=True, help="folder for the PNG files (artifacts.PLOTS)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    paths = PlotInputPaths(args.predictions, args.metrics, args.steps, args.bucket_summary, args.manifest)
    write_plots(paths, args.out_dir)


if __name__ == "__main__":
    run_cli(main)
