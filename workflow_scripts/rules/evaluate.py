"""The `evaluate` rule: predict the test split (and the validation split when evaluate.threshold is
auto), compare the model with its baselines, write predictions.parquet and metrics.json.
`--config` holds the sections evaluate and train (the run's: its seed is the fitted baselines'
random state)."""

from __future__ import annotations

from workflow_scripts.config.stages.evaluate import STAGE
from workflow_scripts.errors import run_cli
from workflow_scripts.evaluation.evaluate import EvaluatePaths, evaluate


def main(argv: list[str] | None = None) -> None:
    paths, cfg = STAGE.parse(argv)
    files = EvaluatePaths(
        paths.windows,
        paths.manifest,
        paths.model,
        paths.model_config,
        paths.out_predictions,
        paths.out_metrics,
    )
    evaluate(files, cfg.evaluate, cfg.train.seed, paths.experiment)


if __name__ == "__main__":
    run_cli(main)
