"""The plots of one experiment (artifacts.PLOTS), one module per kind of figure.

Every input is read before the first figure is drawn, so a file that cannot be read (an
InputError naming it) leaves no partial set of PNGs behind.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import polars as pl
from matplotlib.figure import Figure

from workflow_scripts.artifacts import PLOTS, plot_file_name
from workflow_scripts.evaluation.plots.buckets import length_histogram_figure
from workflow_scripts.evaluation.plots.classification import (
    confusion_matrix_figure,
    precision_recall_figure,
    roc_figure,
)
from workflow_scripts.evaluation.plots.comparison import model_vs_baselines_figure
from workflow_scripts.evaluation.plots.figure import save_figure
from workflow_scripts.evaluation.plots.inputs import (
    TrainingLog,
    read_bucket_summary,
    read_manifest,
    read_metrics,
    read_predictions,
    read_steps,
)
from workflow_scripts.evaluation.plots.training import training_curves_figure


@dataclass(frozen=True)
class PlotInputPaths:
    predictions: str
    metrics: str
    steps: str
    bucket_summary: str
    manifest: str


@dataclass
class PlotInputs:
    predictions: pl.DataFrame
    metrics: dict
    log: TrainingLog
    bucket_summary: dict
    manifest: pl.DataFrame


def read_inputs(paths: PlotInputPaths) -> PlotInputs:
    return PlotInputs(
        predictions=read_predictions(paths.predictions),
        metrics=read_metrics(paths.metrics),
        log=read_steps(paths.steps),
        bucket_summary=read_bucket_summary(paths.bucket_summary),
        manifest=read_manifest(paths.manifest),
    )


FIGURES: dict[str, Callable[[PlotInputs], Figure]] = {
    "roc": lambda inputs: roc_figure(inputs.predictions, inputs.metrics, inputs.bucket_summary),
    "precision_recall": lambda inputs: precision_recall_figure(
        inputs.predictions, inputs.metrics, inputs.bucket_summary
    ),
    "model_vs_baselines": lambda inputs: model_vs_baselines_figure(inputs.metrics),
    "confusion_matrix": lambda inputs: confusion_matrix_figure(inputs.metrics),
    "training_curves": lambda inputs: training_curves_figure(inputs.log),
    "length_histogram": lambda inputs: length_histogram_figure(inputs.manifest, inputs.bucket_summary),
}


def write_plots(paths: PlotInputPaths, out_dir) -> list[Path]:
    """Read every input, then write one PNG per name in artifacts.PLOTS; returns their paths."""
    inputs = read_inputs(paths)
    written = []
    for name in PLOTS:
        path = Path(out_dir) / plot_file_name(name)
        save_figure(FIGURES[name](inputs), path)
        written.append(path)
    return written
