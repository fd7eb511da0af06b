"""The `plot` rule: ROC, precision-recall, confusion matrix, training curves, length histogram."""

from __future__ import annotations

from workflow_scripts.config.stages.plot import STAGE
from workflow_scripts.errors import run_cli
from workflow_scripts.evaluation.plots import PlotInputPaths, write_plots


def main(argv: list[str] | None = None) -> None:
    paths, _ = STAGE.parse(argv)
    inputs = PlotInputPaths(
        paths.predictions, paths.metrics, paths.steps, paths.bucket_summary, paths.manifest
    )
    write_plots(inputs, paths.out_dir)


if __name__ == "__main__":
    run_cli(main)
