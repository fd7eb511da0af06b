"""The `predict_calls` rule: score a new calls table with one experiment's trained model.

Writes every column of the calls table plus p_error and predicted_error (p_error at or above the
threshold evaluate chose), one row per call in the table's order. `--config` holds the sections
experiment (the run's experiments: entry: the model must have been trained for it), predict
(chunk_size), window (flank: the windows the model was trained on; model.json must record the
same) and evaluate (batch_size: the batches evaluate scores in).
"""

from __future__ import annotations

import argparse

from workflow_scripts.config.sections import add_config_argument
from workflow_scripts.config.types import parse_typed_config
from workflow_scripts.errors import run_cli
from workflow_scripts.inference.predict_calls import PredictPaths, PredictSettings, predict_calls

SECTIONS = ("experiment", "predict", "window", "evaluate")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", required=True, help="calls table: .tsv/.tsv.gz/.txt/.csv/.parquet")
    parser.add_argument(
        "--genome", required=True, help="genome index directory (index_genome) or a FASTA file"
    )
    parser.add_argument("--model", required=True, help="model.pt written by train")
    parser.add_argument("--model-config", required=True, help="model.json written by train")
    parser.add_argument("--metrics", required=True, help="metrics.json written by evaluate (the threshold)")
    parser.add_argument("--out-predictions", required=True, help="output parquet")
    add_config_argument(parser, *SECTIONS)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    sections = parse_typed_config(args.config, required=SECTIONS)
    paths = PredictPaths(
        args.calls, args.genome, args.model, args.model_config, args.metrics, args.out_predictions
    )
    settings = PredictSettings(
        flank=sections["window"].flank,
        batch_size=sections["evaluate"].batch_size,
        chunk_size=sections["predict"].chunk_size,
    )
    predict_calls(paths, settings, sections["experiment"])


if __name__ == "__main__":
    run_cli(main)
