"""What every plot shares: the Agg backend, class names, notes and the atomic PNG write."""

from __future__ import annotations

from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from workflow_scripts.io_utils import atomic_path  # noqa: E402

DPI = 120
CLASS_NAMES = ("correct call (0)", "splice-model error (1)")


def new_figure(*grid: int, **options) -> tuple[Figure, Any]:
    """A figure and its axes (one Axes, or an array of them for a grid); save_figure closes it."""
    return plt.subplots(*grid, **options)


def save_figure(fig: Figure, out_path) -> None:
    """Write the PNG atomically (a killed job leaves no half-written plot) and free the figure."""
    try:
        if fig.get_layout_engine() is None:  # a figure made with layout="constrained" keeps it
            fig.tight_layout()
        with atomic_path(out_path) as tmp:
            fig.savefig(tmp, format="png", dpi=DPI)
    finally:
        plt.close(fig)


def experiment_suffix(metrics: dict) -> str:
    return f"\nexperiment: {metrics['experiment']}" if metrics.get("experiment") else ""


def note_in_axes(ax, text: str) -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, fontsize=12, color="firebrick")


# ---- predictors of the model-vs-baselines comparison (comparison_fields names) ------------------
METRIC_LABELS = {"roc_auc": "ROC-AUC", "pr_auc": "PR-AUC (average precision)"}
PREDICTOR_STYLE = {  # name: (label, colour); leak detectors in greys, drawn hollow or dotted
    "model": ("error model", "black"),
    "base_score": ("base model's score", "tab:blue"),
    "base_score_type": ("base score + splice type", "tab:cyan"),
    "score_profile_tree": ("score-profile trees", "tab:brown"),
    "kmer": ("k-mer logistic regression", "tab:orange"),
    "chance": ("chance", "silver"),
    "length": ("window length (leak detector)", "dimgrey"),
    "dinucleotide": ("site dinucleotide (leak detector)", "grey"),
}


def predictor_label(name: str) -> str:
    return PREDICTOR_STYLE.get(name, (name, "tab:purple"))[0]


def predictor_color(name: str) -> str:
    return PREDICTOR_STYLE.get(name, (name, "tab:purple"))[1]
