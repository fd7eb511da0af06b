"""Evaluation and training plots for an error-sequence classifier.

All inputs are read and checked before any figure is drawn, so bad input
(an InputError) never leaves a partial set of PNGs behind.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker as mticker  # noqa: E402
import matplotlib.transforms as mtransforms  # noqa: E402
import numpy as np  # noqa: E402
import polars as pl  # noqa: E402

from workflow_scripts.evaluation.metrics import (  # noqa: E402
    average_precision,
    precision_recall_curve,
    roc_auc,
    roc_curve,
)
from workflow_scripts.errors import InputError, run_cli  # noqa: E402
from workflow_scripts.io_utils import atomic_path  # noqa: E402

DPI = 120
PREDICTION_COLUMNS = ("label", "prob", "bucket")
MANIFEST_COLUMNS = ("label", "token_length")
CONFUSION_KEYS = ("tp", "fp", "tn", "fn")
TRAIN_FIELDS = ("epoch", "step", "loss", "lr", "tokens_per_s", "rss_mb")
TRAIN_NULLABLE_FIELDS = ("gpu_allocated_mb", "gpu_reserved_mb", "gpu_peak_mb", "elapsed_s")
VAL_FIELDS = ("epoch", "step", "val_loss")
VAL_NULLABLE_FIELDS = ("val_accuracy", "val_roc_auc")
CLASS_NAMES = ("correct call (0)", "splice-model error (1)")
OUTPUT_NAMES = {
    "roc": "roc.png",
    "precision_recall": "precision_recall.png",
    "confusion_matrix": "confusion_matrix.png",
    "training_curves": "training_curves.png",
    "length_histogram": "length_histogram.png",
}


@dataclass
class TrainingLog:
    """Per-record columns from steps.jsonl; nulls become NaN."""

    train: dict[str, np.ndarray]
    val: dict[str, np.ndarray]


# ---------------------------------------------------------------- input checks


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _require_number(value, source, field: str, allow_null: bool = False, where: str = "") -> None:
    if value is None and allow_null:
        return
    if not _is_number(value):
        prefix = f"{where}: " if where else ""
        raise InputError(source, field, f"{prefix}must be a number, got {json.dumps(value)}")


def _require_file(path) -> Path:
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "file", "does not exist")
    return path


def read_json_object(path) -> dict:
    path = _require_file(path)
    try:
        payload = json.loads(path.read_text())
    except UnicodeDecodeError as error:
        raise InputError(path, "file", "is not UTF-8 text") from error
    except json.JSONDecodeError as error:
        raise InputError(path, "file", f"invalid JSON ({error.msg} at line {error.lineno})") from error
    if not isinstance(payload, dict):
        raise InputError(path, "file", "must contain a JSON object")
    return payload


def read_table(path, numeric_columns) -> pl.DataFrame:
    """Read a parquet table; the given columns must exist, be numeric, non-null, and have rows."""
    path = _require_file(path)
    try:
        frame = pl.read_parquet(path)
    except (OSError, pl.exceptions.PolarsError) as error:
        raise InputError(path, "file", f"not a readable parquet file ({type(error).__name__})") from error
    for column in numeric_columns:
        if column not in frame.columns:
            raise InputError(path, column, f"missing column (found: {', '.join(frame.columns) or 'none'})")
        if not frame[column].dtype.is_numeric():
            raise InputError(path, column, f"must be numeric, got {frame[column].dtype}")
        if frame[column].null_count():
            raise InputError(path, column, f"{frame[column].null_count()} missing values")
    if frame.height == 0:
        raise InputError(path, "rows", "table has no rows")
    return frame


def _require_binary_labels(frame: pl.DataFrame, path) -> None:
    if not np.isin(frame["label"].to_numpy(), (0, 1)).all():
        raise InputError(path, "label", "values must be 0 or 1")


def load_predictions(path) -> pl.DataFrame:
    frame = read_table(path, PREDICTION_COLUMNS)
    _require_binary_labels(frame, path)
    probs = frame["prob"].to_numpy().astype(float)
    if not (np.isfinite(probs) & (probs >= 0) & (probs <= 1)).all():
        raise InputError(path, "prob", "values must be probabilities between 0 and 1")
    return frame


def load_manifest(path) -> pl.DataFrame:
    frame = read_table(path, MANIFEST_COLUMNS)
    _require_binary_labels(frame, path)
    return frame


def load_metrics(path) -> dict:
    metrics = read_json_object(path)
    _require_number(metrics.get("threshold"), path, "threshold")
    confusion = metrics.get("confusion")
    if not isinstance(confusion, dict):
        raise InputError(path, "confusion", "must be an object with tp, fp, tn, fn")
    for key in CONFUSION_KEYS:
        count = confusion.get(key)
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            raise InputError(path, f"confusion.{key}", "must be a non-negative integer")
    return metrics


def _check_bucket_entry(entry, path, index: int) -> None:
    if not isinstance(entry, dict):
        raise InputError(path, f"buckets[{index}]", "must be an object")
    for key in ("bucket", "lower", "upper", "count"):
        _require_number(entry.get(key), path, f"buckets[{index}].{key}")
    _require_number(entry.get("batch_size"), path, f"buckets[{index}].batch_size", allow_null=True)


def load_bucket_summary(path) -> dict:
    summary = read_json_object(path)
    boundaries = summary.get("boundaries")
    if not isinstance(boundaries, list) or not boundaries:
        raise InputError(path, "boundaries", "must be a non-empty list of token lengths")
    for index, boundary in enumerate(boundaries):
        _require_number(boundary, path, f"boundaries[{index}]")
    buckets = summary.get("buckets")
    if not isinstance(buckets, list) or not buckets:
        raise InputError(path, "buckets", "must be a non-empty list")
    for index, entry in enumerate(buckets):
        _check_bucket_entry(entry, path, index)
    efficiency = summary.get("padding_efficiency")
    if not isinstance(efficiency, dict):
        raise InputError(path, "padding_efficiency", "must be an object")
    for key in ("plan", "pad_to_max"):
        _require_number(efficiency.get(key), path, f"padding_efficiency.{key}")
    return summary


def _parse_step_line(line: str, path, line_number: int) -> dict | None:
    try:
        record = json.loads(line)
    except json.JSONDecodeError as error:
        raise InputError(path, f"line {line_number}", f"invalid JSON ({error.msg})") from error
    if not isinstance(record, dict):
        raise InputError(path, f"line {line_number}", "must be a JSON object")
    kind = record.get("kind")
    if kind not in ("train", "val"):
        return None
    required, nullable = (TRAIN_FIELDS, TRAIN_NULLABLE_FIELDS) if kind == "train" else (VAL_FIELDS, VAL_NULLABLE_FIELDS)
    where = f"line {line_number}"
    for field in required:
        _require_number(record.get(field), path, field, where=where)
    for field in nullable:
        _require_number(record.get(field), path, field, allow_null=True, where=where)
    return record


def _columns(records: list[dict], fields) -> dict[str, np.ndarray]:
    return {
        field: np.array([np.nan if record.get(field) is None else float(record[field]) for record in records])
        for field in fields
    }


def load_steps(path) -> TrainingLog:
    path = _require_file(path)
    records = []
    for line_number, line in enumerate(path.read_text().splitlines(), start=1):
        if line.strip():
            record = _parse_step_line(line, path, line_number)
            if record is not None:
                records.append(record)
    train = [record for record in records if record["kind"] == "train"]
    val = [record for record in records if record["kind"] == "val"]
    if not train:
        raise InputError(path, "kind", 'no training step records ("kind": "train")')
    return TrainingLog(
        train=_columns(train, TRAIN_FIELDS + TRAIN_NULLABLE_FIELDS),
        val=_columns(val, VAL_FIELDS + VAL_NULLABLE_FIELDS),
    )


# ---------------------------------------------------------------- drawing helpers


def _save(fig, out_path) -> None:
    try:
        fig.tight_layout()
        with atomic_path(out_path) as tmp:
            fig.savefig(tmp, format="png", dpi=DPI)
    finally:
        plt.close(fig)


def _experiment_suffix(metrics: dict) -> str:
    experiment = metrics.get("experiment")
    return f"\nexperiment: {experiment}" if experiment else ""


def _labels_and_probs(predictions: pl.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    return predictions["label"].to_numpy().astype(int), predictions["prob"].to_numpy().astype(float)


def _bucket_description(bucket: int, bucket_summary: dict | None) -> str:
    for entry in (bucket_summary or {}).get("buckets", []):
        if entry.get("bucket") == bucket:
            return f"length bucket {bucket} ({entry['lower']:g}-{entry['upper']:g} tokens)"
    return f"length bucket {bucket}"


def _curves_per_bucket(predictions: pl.DataFrame) -> list[tuple]:
    """(color, bucket, labels, probs) for each bucket holding both classes; none if only one bucket."""
    labels, probs = _labels_and_probs(predictions)
    buckets = predictions["bucket"].to_numpy()
    if np.unique(buckets).size < 2:
        return []
    usable = [bucket for bucket in np.unique(buckets) if np.unique(labels[buckets == bucket]).size == 2]
    colors = plt.cm.viridis(np.linspace(0.1, 0.85, max(len(usable), 1)))
    return [(color, int(bucket), labels[buckets == bucket], probs[buckets == bucket])
            for color, bucket in zip(colors, usable)]


def _note_single_class(ax, what: str) -> None:
    ax.text(0.5, 0.5, f"{what} undefined:\nonly one class present", ha="center", va="center",
            transform=ax.transAxes, fontsize=12, color="firebrick")


# ---------------------------------------------------------------- plots


def _operating_point(metrics: dict) -> tuple[float, float, float] | None:
    """(false positive rate, recall, precision) at the reported threshold, if defined."""
    tp, fp, tn, fn = (metrics["confusion"][key] for key in CONFUSION_KEYS)
    if tp + fn == 0 or fp + tn == 0:
        return None
    precision = tp / (tp + fp) if tp + fp else 0.0
    return fp / (fp + tn), tp / (tp + fn), precision


def plot_roc(predictions: pl.DataFrame, metrics: dict, out_path, bucket_summary: dict | None = None) -> None:
    """ROC curve over all windows, one thinner curve per length bucket, and the operating point."""
    labels, probs = _labels_and_probs(predictions)
    fig, ax = plt.subplots(figsize=(6.5, 6))
    if labels.min() == labels.max():
        _note_single_class(ax, "ROC curve")
    else:
        fpr, tpr, _ = roc_curve(labels, probs)
        ax.plot(fpr, tpr, color="black", lw=2.2, label=f"all windows (n={labels.size:,}, AUC = {roc_auc(labels, probs):.3f})")
        for color, bucket, bucket_labels, bucket_probs in _curves_per_bucket(predictions):
            fpr, tpr, _ = roc_curve(bucket_labels, bucket_probs)
            auc = roc_auc(bucket_labels, bucket_probs)
            name = _bucket_description(bucket, bucket_summary)
            ax.plot(fpr, tpr, color=color, lw=1.1, alpha=0.9, label=f"{name}, n={bucket_labels.size:,}, AUC = {auc:.3f}")
        point = _operating_point(metrics)
        if point:
            ax.plot(point[0], point[1], "o", color="crimson", ms=8, label=f"threshold {metrics['threshold']:g}")
    ax.plot([0, 1], [0, 1], ls="--", color="grey", lw=1, label="random guessing (AUC = 0.5)")
    ax.set(xlim=(0, 1), ylim=(0, 1.02), aspect="equal",
           xlabel="False positive rate\n(correct calls wrongly flagged as errors)",
           ylabel="True positive rate (recall)\n(splice-model errors detected)",
           title="ROC: detecting splice-model errors" + _experiment_suffix(metrics))
    ax.legend(loc="lower right", fontsize=7.5)
    ax.grid(alpha=0.3)
    _save(fig, out_path)


def plot_precision_recall(predictions: pl.DataFrame, metrics: dict, out_path, bucket_summary: dict | None = None) -> None:
    """Precision-recall curve (step-wise, matching average precision) per bucket and overall."""
    labels, probs = _labels_and_probs(predictions)
    fig, ax = plt.subplots(figsize=(6.5, 6))
    if labels.min() == labels.max():
        _note_single_class(ax, "Precision-recall curve")
    else:
        precision, recall, _ = precision_recall_curve(labels, probs)
        ax.plot(recall, precision, color="black", lw=2.2, drawstyle="steps-pre",
                label=f"all windows (n={labels.size:,}, AP = {average_precision(labels, probs):.3f})")
        for color, bucket, bucket_labels, bucket_probs in _curves_per_bucket(predictions):
            precision, recall, _ = precision_recall_curve(bucket_labels, bucket_probs)
            ap = average_precision(bucket_labels, bucket_probs)
            name = _bucket_description(bucket, bucket_summary)
            ax.plot(recall, precision, color=color, lw=1.1, alpha=0.9, drawstyle="steps-pre",
                    label=f"{name}, n={bucket_labels.size:,}, AP = {ap:.3f}")
        prevalence = labels.mean()
        ax.axhline(prevalence, ls="--", color="grey", lw=1, label=f"random guessing (precision = error rate {prevalence:.3f})")
        point = _operating_point(metrics)
        if point:
            ax.plot(point[1], point[2], "o", color="crimson", ms=8, label=f"threshold {metrics['threshold']:g}")
    ax.set(xlim=(0, 1), ylim=(0, 1.02),
           xlabel="Recall (share of splice-model errors detected)",
           ylabel="Precision (share of flagged windows that are real errors)",
           title="Precision-recall: detecting splice-model errors\nAP = average precision" + _experiment_suffix(metrics))
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="lower left", fontsize=7.5)
    ax.grid(alpha=0.3)
    _save(fig, out_path)


def plot_confusion_matrix(metrics: dict, out_path) -> None:
    """2x2 counts at the reported threshold, shaded by the share of each true class."""
    confusion = metrics["confusion"]
    counts = np.array([[confusion["tn"], confusion["fp"]], [confusion["fn"], confusion["tp"]]])
    shares = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1)
    cell_names = (("true negatives", "false positives"), ("false negatives", "true positives"))
    fig, ax = plt.subplots(figsize=(6.5, 5.5))
    image = ax.imshow(shares, cmap="Blues", vmin=0, vmax=1)
    for row in range(2):
        for col in range(2):
            ax.text(col, row, f"{cell_names[row][col]}\n{counts[row, col]:,}\n({shares[row, col]:.1%} of row)",
                    ha="center", va="center", fontsize=11,
                    color="white" if shares[row, col] > 0.6 else "black")
    ax.set_xticks([0, 1], [f"predicted\n{name}" for name in CLASS_NAMES])
    ax.set_yticks([0, 1], [f"actual\n{name}" for name in CLASS_NAMES])
    fig.colorbar(image, ax=ax, label="share of the actual class")
    threshold = metrics["threshold"]
    ax.set_title(f"Confusion matrix at threshold {threshold:g}\n(predicted error when P(error) >= {threshold:g})"
                 + _experiment_suffix(metrics))
    _save(fig, out_path)


def _draw_epoch_starts(ax, train: dict[str, np.ndarray]) -> None:
    epochs, steps = train["epoch"], train["step"]
    new_epoch = np.flatnonzero(np.diff(epochs) != 0) + 1
    for index, position in enumerate(new_epoch):
        ax.axvline(steps[position], color="grey", ls=":", lw=1, label="new epoch" if index == 0 else None)


def _draw_loss(ax, log: TrainingLog) -> None:
    ax.plot(log.train["step"], log.train["loss"], lw=1, alpha=0.8, label="training loss (per step)")
    if log.val["step"].size:
        ax.plot(log.val["step"], log.val["val_loss"], "o-", color="darkorange", label="validation loss")
    _draw_epoch_starts(ax, log.train)
    ax.set(ylabel="cross-entropy loss", title="Loss")
    ax.legend(fontsize=8)


def _draw_learning_rate(ax, log: TrainingLog) -> None:
    ax.plot(log.train["step"], log.train["lr"], color="purple")
    ax.set(ylabel="learning rate", title="Learning-rate schedule")
    ax.ticklabel_format(axis="y", style="sci", scilimits=(-3, 3))


def _draw_throughput(ax, log: TrainingLog) -> None:
    ax.plot(log.train["step"], log.train["tokens_per_s"], color="seagreen")
    ax.set(ylabel="tokens per second", title="Training throughput")
    ax.set_ylim(bottom=0)


def _draw_memory(ax, log: TrainingLog) -> None:
    ax.plot(log.train["step"], log.train["rss_mb"], label="host RAM (RSS)")
    for field, name in (("gpu_allocated_mb", "GPU allocated"), ("gpu_peak_mb", "GPU peak allocated")):
        if not np.isnan(log.train[field]).all():
            ax.plot(log.train["step"], log.train[field], label=name)
    ax.set(ylabel="memory (MB)", title="Memory use")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8)


def _training_summary(log: TrainingLog) -> str:
    steps = int(np.nanmax(log.train["step"]))
    epochs = len(np.unique(log.train["epoch"]))
    summary = f"Training curves: {steps:,} optimizer steps over {epochs} epoch{'s' if epochs != 1 else ''}"
    elapsed = log.train["elapsed_s"]
    if not np.isnan(elapsed).all():
        summary += f", {np.nanmax(elapsed) / 60:.1f} min"
    return summary


def plot_training_curves(log: TrainingLog, out_path) -> None:
    """2x2 grid: loss, learning rate, throughput and memory against optimizer step."""
    fig, axes = plt.subplots(2, 2, figsize=(11, 8), sharex=True)
    _draw_loss(axes[0, 0], log)
    _draw_learning_rate(axes[0, 1], log)
    _draw_throughput(axes[1, 0], log)
    _draw_memory(axes[1, 1], log)
    for ax in axes.flat:
        ax.grid(alpha=0.3)
    for ax in axes[1]:
        ax.set_xlabel("optimizer step")
    fig.suptitle(_training_summary(log))
    _save(fig, out_path)


def _format_efficiency(value: float) -> str:
    return f"{value:.1%}" if 0 <= value <= 1 else f"{value:.3g}"


def _efficiency_title(bucket_summary: dict) -> str:
    efficiency = bucket_summary["padding_efficiency"]
    return (f"padding efficiency (real / padded tokens): {_format_efficiency(efficiency['plan'])} with length"
            f" buckets\nvs {_format_efficiency(efficiency['pad_to_max'])} when padding every batch to the longest window")


def _add_other_efficiencies_to_legend(ax, bucket_summary: dict) -> None:
    others = {key: value for key, value in bucket_summary["padding_efficiency"].items()
              if key not in ("plan", "pad_to_max") and _is_number(value)}
    for key, value in others.items():
        ax.plot([], [], " ", label=f"padding efficiency, {key.replace('_', ' ')}: {_format_efficiency(value)}")


def _length_bins(token_lengths: np.ndarray, boundaries: list) -> tuple[np.ndarray, bool]:
    """Histogram bin edges, and whether to use a log axis (when lengths span > 16x)."""
    low = max(float(token_lengths.min()), 1.0)
    high = max(float(token_lengths.max()), float(max(boundaries)))
    if high / low > 16:
        return np.geomspace(low, high * 1.02, 61), True
    return np.linspace(0, high * 1.02, 61), False


def _use_log_length_axis(ax, boundaries: list) -> None:
    ax.set_xscale("log")
    ax.set_xticks([float(boundary) for boundary in boundaries], [f"{boundary:g}" for boundary in boundaries])
    ax.xaxis.set_minor_formatter(mticker.NullFormatter())


def _label_buckets(ax, bucket_summary: dict) -> None:
    """Dashed line at each bucket edge; each bucket's count written just below its upper edge."""
    to_axes_height = mtransforms.blended_transform_factory(ax.transData, ax.transAxes)
    for boundary in bucket_summary["boundaries"]:
        ax.axvline(boundary, color="crimson", ls="--", lw=1)
    for entry in bucket_summary["buckets"]:
        batch = f"\nbatch size {entry['batch_size']:g}" if entry.get("batch_size") is not None else ""
        ax.text(entry["upper"], 0.98, f"bucket {entry['bucket']:g}: {entry['count']:,} windows{batch} ",
                rotation=90, ha="right", va="top", fontsize=7.5, color="crimson", transform=to_axes_height)


def plot_length_histogram(manifest: pl.DataFrame, bucket_summary: dict, out_path) -> None:
    """Token lengths, stacked by class, with bucket edges and counts marked."""
    token_lengths = manifest["token_length"].to_numpy().astype(float)
    labels = manifest["label"].to_numpy()
    bins, log_axis = _length_bins(token_lengths, bucket_summary["boundaries"])
    fig, ax = plt.subplots(figsize=(11, 5.5))
    heights, _, _ = ax.hist([token_lengths[labels == 0], token_lengths[labels == 1]], bins=bins, stacked=True,
                            color=["steelblue", "darkorange"], label=list(CLASS_NAMES))
    ax.set_ylim(0, max(float(np.max(heights)), 1.0) * 1.6)  # headroom for the bucket labels
    if log_axis:
        _use_log_length_axis(ax, bucket_summary["boundaries"])
    ax.plot([], [], color="crimson", ls="--", lw=1, label="bucket upper edge")
    _add_other_efficiencies_to_legend(ax, bucket_summary)
    _label_buckets(ax, bucket_summary)
    ax.set(xlabel="window length (tokens)" + (", log scale" if log_axis else ""), ylabel="number of windows",
           title=f"Window lengths and length buckets (n={token_lengths.size:,})\n{_efficiency_title(bucket_summary)}")
    ax.legend(loc="upper left", fontsize=8, bbox_to_anchor=(1.01, 1))
    ax.grid(alpha=0.3, axis="y")
    _save(fig, out_path)


# ---------------------------------------------------------------- CLI


def make_all_plots(predictions_path, metrics_path, steps_path, bucket_summary_path, manifest_path, out_dir) -> list[Path]:
    """Check every input, then write the five PNGs; returns their paths."""
    predictions = load_predictions(predictions_path)
    metrics = load_metrics(metrics_path)
    log = load_steps(steps_path)
    bucket_summary = load_bucket_summary(bucket_summary_path)
    manifest = load_manifest(manifest_path)
    outputs = {name: Path(out_dir) / file_name for name, file_name in OUTPUT_NAMES.items()}
    plot_roc(predictions, metrics, outputs["roc"], bucket_summary)
    plot_precision_recall(predictions, metrics, outputs["precision_recall"], bucket_summary)
    plot_confusion_matrix(metrics, outputs["confusion_matrix"])
    plot_training_curves(log, outputs["training_curves"])
    plot_length_histogram(manifest, bucket_summary, outputs["length_histogram"])
    return list(outputs.values())


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Plot ROC, precision-recall, confusion matrix, "
                                     "training curves and the length histogram.")
    parser.add_argument("--predictions", required=True, help="predictions parquet (label, prob, bucket)")
    parser.add_argument("--metrics", required=True, help="metrics JSON (threshold, confusion)")
    parser.add_argument("--steps", required=True, help="training steps JSONL")
    parser.add_argument("--bucket-summary", required=True, help="length-bucket summary JSON")
    parser.add_argument("--manifest", required=True, help="dataset manifest parquet (label, token_length)")
    parser.add_argument("--out-dir", required=True, help="directory for the PNG files")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    make_all_plots(args.predictions, args.metrics, args.steps, args.bucket_summary, args.manifest, args.out_dir)


if __name__ == "__main__":
    run_cli(main)
