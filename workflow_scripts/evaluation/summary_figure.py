"""summary.png: every run of the summary (evaluation/summary.py), ROC-AUC and PR-AUC of the model
and each baseline with 95% intervals, runs down the axis.

summary.html shows it at its own size, SUMMARY_WIDTH_PX wide, with no text under SUMMARY_FONT_PT.
Apart from the plots package, so that an edit here does not rerun the plot and explain rules.
"""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from workflow_scripts.comparison_fields import CHANCE, METRICS, PREDICTORS
from workflow_scripts.evaluation.answer import says_nothing
from workflow_scripts.evaluation.plots.comparison import AUC_AXIS, draw_point, point_from_row
from workflow_scripts.evaluation.plots.figure import DPI, METRIC_LABELS, new_figure, predictor_label

SUMMARY_WIDTH_IN = 9.0
SUMMARY_WIDTH_PX = round(SUMMARY_WIDTH_IN * DPI)  # 1080
SUMMARY_FONT_PT = 9


def summary_panel(ax, rows: list[dict], metric: str) -> None:
    """Experiments down the axis, one short line per predictor within each experiment."""
    experiments = list(dict.fromkeys(row["experiment"] for row in rows))
    predictors = [p for p in PREDICTORS if any(row["predictor"] == p for row in rows)]
    step = 0.8 / max(len(predictors), 1)
    for index, experiment in enumerate(experiments):
        for offset, predictor in enumerate(predictors):
            row = next(
                (
                    r
                    for r in rows
                    if (r["experiment"], r["predictor"], r["metric"]) == (experiment, predictor, metric)
                ),
                None,
            )
            if row is not None:
                draw_point(ax, point_from_row(row, -index - offset * step), with_label=index == 0)
    if metric == "roc_auc":
        ax.axvline(0.5, ls="--", lw=0.9, color="grey", zorder=0)
    centres = -np.arange(len(experiments)) - 0.4 + step / 2
    ax.set_yticks(centres, experiments, fontsize=SUMMARY_FONT_PT + 1)
    ax.set(xlim=AUC_AXIS, ylim=(-len(experiments) + 0.1, 0.3))
    ax.set_xlabel(METRIC_LABELS[metric], fontsize=SUMMARY_FONT_PT + 1)
    ax.tick_params(axis="x", labelsize=SUMMARY_FONT_PT)
    ax.grid(axis="x", alpha=0.3)


def without_silent(rows: list[dict]) -> tuple[list[dict], list[str]]:
    """The rows without the baselines (chance kept) whose ROC-AUC says nothing by construction in
    that run (answer.says_nothing), and the names of those left out."""
    silent = {
        (row["experiment"], row["predictor"])
        for row in rows
        if row["metric"] == "roc_auc" and row["predictor"] != CHANCE and says_nothing(row)
    }
    kept = [row for row in rows if (row["experiment"], row["predictor"]) not in silent]
    return kept, sorted({predictor for _, predictor in silent})


def summary_figure(rows: list[dict]) -> Figure:
    """rows: evaluation/summary.py's long rows (experiment, predictor, metric, estimate, low, high, ...)."""
    rows, silent = without_silent(rows)
    n_experiments = len({row["experiment"] for row in rows})
    fig, axes = new_figure(
        1,
        len(METRICS),
        figsize=(SUMMARY_WIDTH_IN, 2.6 + 1.1 * n_experiments),
        squeeze=False,
        layout="constrained",
    )
    for col, metric in enumerate(METRICS):
        summary_panel(axes[0, col], rows, metric)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(
        handles, labels, loc="outside lower center", ncol=min(len(labels), 3), fontsize=SUMMARY_FONT_PT
    )
    fig.suptitle(
        "Every run: the model and its baselines on the test genes (95% intervals over genes)\n"
        "hollow grey = leak detector; dashed = chance"
        + "".join(f"\n{predictor_label(name)}: left out, the same score for every window" for name in silent),
        fontsize=SUMMARY_FONT_PT + 1,
    )
    return fig
