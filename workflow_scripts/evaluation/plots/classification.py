"""ROC and precision-recall curves (with the baselines' curves) and the confusion matrix of the evaluated split."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import polars as pl
from matplotlib import colormaps
from matplotlib.figure import Figure

from workflow_scripts.artifacts import BASELINE_SCORE_PREFIX, CONFUSION_FIELDS
from workflow_scripts.comparison_fields import CHANCE, predictor_kind
from workflow_scripts.evaluation.plots.figure import (
    CLASS_NAMES,
    experiment_suffix,
    new_figure,
    note_in_axes,
    predictor_color,
    predictor_label,
)
from workflow_scripts.metrics import average_precision, precision_recall_curve, roc_auc, roc_curve

# A length bucket gets a curve of its own only with at least this many windows of each class;
# fewer make a few coarse steps that clutter the figure and say little.
MIN_WINDOWS_PER_CLASS = 20


def legend_below(fig, ax) -> None:
    """The legend under the axes (constrained layout makes room): with the buckets and the
    baselines there are too many curves to hide a legend on."""
    handles, labels = ax.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", fontsize=7.5)


@dataclass
class BucketCurve:
    bucket: int
    labels: np.ndarray
    probs: np.ndarray
    color: tuple


def labels_and_probs(predictions: pl.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    return predictions["label"].to_numpy().astype(int), predictions["prob"].to_numpy().astype(float)


def bucket_curves(predictions: pl.DataFrame) -> tuple[list[BucketCurve], int]:
    """The buckets drawn on their own (>= MIN_WINDOWS_PER_CLASS of each class) and how many are
    not; none when all windows are in one bucket (its curve is the overall one)."""
    labels, probs = labels_and_probs(predictions)
    buckets = predictions["bucket"].to_numpy()
    present = np.unique(buckets)
    if present.size < 2:
        return [], 0
    usable = [
        bucket
        for bucket in present
        if min(np.sum(labels[buckets == bucket] == 1), np.sum(labels[buckets == bucket] == 0))
        >= MIN_WINDOWS_PER_CLASS
    ]
    colors = [tuple(color) for color in colormaps["viridis"](np.linspace(0.1, 0.85, max(len(usable), 1)))]
    curves = [
        BucketCurve(int(bucket), labels[buckets == bucket], probs[buckets == bucket], color)
        for bucket, color in zip(usable, colors)
    ]
    return curves, present.size - len(usable)


def baseline_curves(predictions: pl.DataFrame) -> list[tuple[str, np.ndarray]]:
    """(name, scores) of each baseline in the predictions, chance left out (the diagonal already is)."""
    names = [
        column.removeprefix(BASELINE_SCORE_PREFIX)
        for column in predictions.columns
        if column.startswith(BASELINE_SCORE_PREFIX)
    ]
    return [
        (name, predictions[f"{BASELINE_SCORE_PREFIX}{name}"].to_numpy().astype(float))
        for name in names
        if name != CHANCE
    ]


def baseline_style(name: str) -> dict:
    leak = predictor_kind(name) == "leak detector"
    return {"color": predictor_color(name), "lw": 1.3, "ls": ":" if leak else "--", "alpha": 0.95}


@dataclass(frozen=True)
class CurveKind:
    """A ROC or a precision-recall curve: its points and summary score for one set of scores."""

    name: str
    score_name: str
    score: Callable[[np.ndarray, np.ndarray], float | None]
    points: Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]
    drawstyle: str

    def score_text(self, labels: np.ndarray, scores: np.ndarray) -> str:
        return f"{self.score_name} = {self.score(labels, scores):.3f}"


def roc_points(labels: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    fpr, tpr, _ = roc_curve(labels, scores)
    return fpr, tpr


def recall_precision_points(labels: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    precision, recall, _ = precision_recall_curve(labels, scores)
    return recall, precision


ROC = CurveKind("ROC curve", "AUC", roc_auc, roc_points, drawstyle="default")
# Step-wise, as average precision is computed.
PRECISION_RECALL = CurveKind(
    "Precision-recall curve", "AP", average_precision, recall_precision_points, drawstyle="steps-pre"
)


def draw_curve(ax, kind: CurveKind, labels: np.ndarray, scores: np.ndarray, label: str, **style) -> None:
    ax.plot(*kind.points(labels, scores), drawstyle=kind.drawstyle, label=label, **style)


def draw_baselines(ax, kind: CurveKind, predictions: pl.DataFrame) -> None:
    labels = predictions["label"].to_numpy().astype(int)
    for name, scores in baseline_curves(predictions):
        label = f"baseline: {predictor_label(name)}, {kind.score_text(labels, scores)}"
        draw_curve(ax, kind, labels, scores, label, **baseline_style(name))


def bucket_name(bucket: int, bucket_summary: dict) -> str:
    for entry in bucket_summary["buckets"]:
        if entry["bucket"] == bucket:
            return f"length bucket {bucket} ({entry['lower']:g}-{entry['upper']:g} tokens)"
    return f"length bucket {bucket}"


def _note_left_out(ax, left_out: int) -> None:
    if left_out:
        ax.plot(
            [],
            [],
            " ",
            label=f"{left_out} length bucket{'s' if left_out > 1 else ''} with < "
            f"{MIN_WINDOWS_PER_CLASS} windows of a class: no curve of their own",
        )


def draw_curves(ax, kind: CurveKind, predictions: pl.DataFrame, bucket_summary: dict) -> None:
    """The curve over all windows, one thinner curve per well-populated length bucket (and a note on
    the others) and the baselines' curves."""
    labels, probs = labels_and_probs(predictions)
    overall = f"all windows (n={labels.size:,}, {kind.score_text(labels, probs)})"
    draw_curve(ax, kind, labels, probs, overall, color="black", lw=2.2)
    curves, left_out = bucket_curves(predictions)
    for curve in curves:
        label = (
            f"{bucket_name(curve.bucket, bucket_summary)}, n={curve.labels.size:,}, "
            f"{kind.score_text(curve.labels, curve.probs)}"
        )
        draw_curve(ax, kind, curve.labels, curve.probs, label, color=curve.color, lw=1.1, alpha=0.9)
    _note_left_out(ax, left_out)
    draw_baselines(ax, kind, predictions)


def curves_figure(kind: CurveKind, predictions: pl.DataFrame, bucket_summary: dict):
    """A figure with kind's curves drawn, its axes and the windows' labels; with one class present
    a note instead of curves, and None for the labels."""
    labels = labels_and_probs(predictions)[0]
    fig, ax = new_figure(figsize=(6.5, 8.2), layout="constrained")
    if labels.min() == labels.max():
        note_in_axes(ax, f"{kind.name} undefined:\nonly one class present")
        return fig, ax, None
    draw_curves(ax, kind, predictions, bucket_summary)
    return fig, ax, labels


def mark_threshold(ax, x: float, y: float, metrics: dict) -> None:
    ax.plot(x, y, "o", color="crimson", ms=8, label=f"threshold {metrics['threshold']:.3g}")


def finish_curves_figure(fig, ax, **axes_settings) -> Figure:
    ax.set(xlim=(0, 1), ylim=(0, 1.02), **axes_settings)
    if ax.get_legend_handles_labels()[0]:
        legend_below(fig, ax)
    ax.grid(alpha=0.3)
    return fig


def operating_point(metrics: dict) -> tuple[float, float, float | None] | None:
    """(false positive rate, recall, precision) at the reported threshold; None with one class."""
    tp, fp, tn, fn = (metrics["confusion"][key] for key in CONFUSION_FIELDS)
    if tp + fn == 0 or fp + tn == 0:
        return None
    return fp / (fp + tn), tp / (tp + fn), (tp / (tp + fp) if tp + fp else None)


def roc_figure(predictions: pl.DataFrame, metrics: dict, bucket_summary: dict) -> Figure:
    """ROC over all windows, one thinner curve per well-populated length bucket, the baselines
    (dashed; leak detectors dotted) and the operating point."""
    fig, ax, labels = curves_figure(ROC, predictions, bucket_summary)
    point = operating_point(metrics)
    if labels is not None and point:
        mark_threshold(ax, point[0], point[1], metrics)
    ax.plot([0, 1], [0, 1], ls="--", color="grey", lw=1, label="random guessing (AUC = 0.5)")
    return finish_curves_figure(
        fig,
        ax,
        aspect="equal",
        xlabel="False positive rate\n(correct calls wrongly flagged as errors)",
        ylabel="True positive rate (recall)\n(splice-model errors detected)",
        title="ROC: detecting splice-model errors" + experiment_suffix(metrics),
    )


def precision_recall_figure(predictions: pl.DataFrame, metrics: dict, bucket_summary: dict) -> Figure:
    """Precision-recall (step-wise, as average precision is computed), overall, per bucket and for
    each baseline (dashed; leak detectors dotted)."""
    fig, ax, labels = curves_figure(PRECISION_RECALL, predictions, bucket_summary)
    if labels is not None:
        prevalence = labels.mean()
        ax.axhline(
            prevalence,
            ls="--",
            color="grey",
            lw=1,
            label=f"random guessing (precision = error rate {prevalence:.3f})",
        )
        point = operating_point(metrics)
        if point and point[2] is not None:
            mark_threshold(ax, point[1], point[2], metrics)
    return finish_curves_figure(
        fig,
        ax,
        xlabel="Recall (share of splice-model errors detected)",
        ylabel="Precision (share of flagged windows that are real errors)",
        title="Precision-recall: detecting splice-model errors\nAP = average precision"
        + experiment_suffix(metrics),
    )


def confusion_matrix_figure(metrics: dict) -> Figure:
    """2x2 counts at the reported threshold, shaded by the share of each actual class."""
    confusion = metrics["confusion"]
    counts = np.array([[confusion["tn"], confusion["fp"]], [confusion["fn"], confusion["tp"]]])
    shares = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1)
    cell_names = (("true negatives", "false positives"), ("false negatives", "true positives"))
    fig, ax = new_figure(figsize=(6.5, 5.5))
    image = ax.imshow(shares, cmap="Blues", vmin=0, vmax=1)
    for row in range(2):
        for col in range(2):
            ax.text(
                col,
                row,
                f"{cell_names[row][col]}\n{counts[row, col]:,}\n({shares[row, col]:.1%} of row)",
                ha="center",
                va="center",
                fontsize=11,
                color="white" if shares[row, col] > 0.6 else "black",
            )
    ax.set_xticks([0, 1], [f"predicted\n{name}" for name in CLASS_NAMES])
    ax.set_yticks([0, 1], [f"actual\n{name}" for name in CLASS_NAMES])
    fig.colorbar(image, ax=ax, label="share of the actual class")
    threshold = metrics["threshold"]
    ax.set_title(
        f"Confusion matrix at threshold {threshold:g}\n(predicted error when P(error) >= {threshold:g})"
        + experiment_suffix(metrics)
    )
    return fig
