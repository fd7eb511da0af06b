"""The `evaluate` rule: predict the test split (and the validation split when evaluate.threshold is
auto), compare the model with its baselines, write predictions.parquet and metrics.json.
`--config` holds the sections evaluate and train (the run's: its seed is the fitted baselines'
random state)."""

from __future__ import annotations

import argparse

from workflow_scripts.config.sections import add_config_argument
from workflow_scripts.config.types import parse_typed_config
from workflow_scripts.errors import run_cli
from workflow_scripts.evaluation.evaluate import EvaluatePaths, evaluate


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--windows", required=True)
    parser.add_argument("--manifest", required=True, help="bucket manifest (split, bucket per window)")
    parser.add_argument("--model", required=True, help="plain state dict written by train")
    parser.add_argument("--model-config", required=True, help="model.json written by train")
    parser.add_argument("--experiment", required=True, help="the experiment wildcard")
    parser.add_argument("--out-predictions", required=True)
    parser.add_argument("--out-metrics", required=True)
    add_config_argument(parser, "evaluate", "train")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    sections = parse_typed_config(args.config, required=("evaluate", "train"))
    paths = EvaluatePaths(
        args.windows, args.manifest, args.model, args.model_config, args.out_predictions, args.out_metrics
    )
    evaluate(paths, sections["evaluate"], sections["train"].seed, args.experiment)


if __name__ == "__main__":
    run_cli(main)
