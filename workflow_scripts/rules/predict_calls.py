"""The `predict_calls` rule: score a new calls table with one experiment's trained model.

Writes every column of the calls table plus p_error and predicted_error (p_error at or above the
threshold evaluate chose), one row per call in the table's order. `--config` holds the sections
experiment (the run's experiments: entry: the model must have been trained for it), predict
(chunk_size), window (flank: the windows the model was trained on; model.json must record the
same) and evaluate (batch_size: the batches evaluate scores in).
"""

from __future__ import annotations

from workflow_scripts.config.stages.predict_calls import STAGE
from workflow_scripts.errors import run_cli
from workflow_scripts.inference.predict_calls import PredictPaths, PredictSettings, predict_calls


def main(argv: list[str] | None = None) -> None:
    paths, cfg = STAGE.parse(argv)
    files = PredictPaths(
        paths.calls, paths.genome, paths.model, paths.model_config, paths.metrics, paths.out_predictions
    )
    settings = PredictSettings(
        flank=cfg.window.flank,
        batch_size=cfg.evaluate.batch_size,
        chunk_size=cfg.predict.chunk_size,
    )
    predict_calls(files, settings, cfg.experiment)


if __name__ == "__main__":
    run_cli(main)
