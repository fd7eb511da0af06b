"""Training curves from steps.jsonl: loss, learning rate, throughput and memory per optimizer step."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from workflow_scripts.artifacts import GPU_MEMORY_FIELDS
from workflow_scripts.evaluation.plots.figure import new_figure, note_in_axes
from workflow_scripts.evaluation.plots.inputs import TrainingLog

GPU_MEMORY_NAMES = dict(zip(GPU_MEMORY_FIELDS, ("GPU allocated", "GPU reserved", "GPU peak allocated")))
# Up to this many records, each one gets a marker: a short run's single record is a visible point.
MARKED_RECORDS = 40


def series_style(train: dict[str, np.ndarray]) -> dict:
    return {"marker": "o", "ms": 3} if train["step"].size <= MARKED_RECORDS else {}


def epoch_boundaries(train: dict[str, np.ndarray]) -> np.ndarray:
    """Step counts at which an epoch ends and the next begins.

    The trainer writes a record after the last step of every epoch (artifacts.py), so the last
    record of each epoch but the final one sits exactly on the boundary."""
    last_of_epoch = np.flatnonzero(np.diff(train["epoch"]) != 0)
    return train["step"][last_of_epoch]


def seconds_in_steps(train: dict[str, np.ndarray]) -> float:
    """Wall time spent in optimizer steps: each record's seconds per step times its steps."""
    steps_per_record = np.diff(train["step"], prepend=0)
    return float(np.sum(train["step_s"] * steps_per_record))


def draw_epoch_boundaries(ax, train: dict[str, np.ndarray]) -> None:
    for index, step in enumerate(epoch_boundaries(train)):
        ax.axvline(step, color="grey", ls=":", lw=1, label="epoch boundary" if index == 0 else None)


def draw_loss(ax, log: TrainingLog) -> None:
    ax.plot(
        log.train["step"],
        log.train["loss"],
        lw=1,
        alpha=0.8,
        label="training loss (mean since last point)",
        **series_style(log.train),
    )
    if log.val["step"].size:
        ax.plot(
            log.val["step"],
            log.val["val_loss"],
            "o-",
            color="darkorange",
            label="validation loss (epoch end)",
        )
    draw_epoch_boundaries(ax, log.train)
    ax.set(ylabel="cross-entropy loss", title="Loss")
    ax.legend(fontsize=8)


def draw_learning_rate(ax, log: TrainingLog) -> None:
    ax.plot(log.train["step"], log.train["lr"], color="purple", **series_style(log.train))
    ax.set(ylabel="learning rate", title="Learning-rate schedule")
    ax.ticklabel_format(axis="y", style="sci", scilimits=(-3, 3))


def draw_throughput(ax, log: TrainingLog) -> None:
    ax.plot(log.train["step"], log.train["tokens_per_s"], color="seagreen", **series_style(log.train))
    ax.set(ylabel="real tokens per second (all ranks)", title="Training throughput")
    ax.set_ylim(bottom=0)


def draw_memory(ax, log: TrainingLog) -> None:
    ax.plot(log.train["step"], log.train["rss_mb"], label="host RAM (RSS, rank 0)", **series_style(log.train))
    for field in ("gpu_allocated_mb", "gpu_peak_mb"):
        if not np.isnan(log.train[field]).all():
            ax.plot(
                log.train["step"], log.train[field], label=GPU_MEMORY_NAMES[field], **series_style(log.train)
            )
    ax.set(ylabel="memory (MB)", title="Memory use")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8)


def training_title(log: TrainingLog) -> str:
    steps = int(log.train["step"].max())
    epochs = len(np.unique(log.train["epoch"]))
    minutes = seconds_in_steps(log.train) / 60
    return (
        f"Training curves: {steps:,} optimizer steps over {epochs} epoch{'s' if epochs != 1 else ''}, "
        f"{minutes:.1f} min in steps"
    )


def training_curves_figure(log: TrainingLog) -> Figure:
    """2x2 grid: loss, learning rate, throughput and memory against optimizer step."""
    if log.train["step"].size == 0:
        fig, ax = new_figure(figsize=(11, 4))
        note_in_axes(ax, "no training step was logged\n(train.log_every_steps is larger than the steps run?)")
        ax.set_axis_off()
        return fig
    fig, axes = new_figure(2, 2, figsize=(11, 8), sharex=True)
    draw_loss(axes[0, 0], log)
    draw_learning_rate(axes[0, 1], log)
    draw_throughput(axes[1, 0], log)
    draw_memory(axes[1, 1], log)
    for ax in axes.flat:
        ax.grid(alpha=0.3)
    for ax in axes[1]:
        ax.set_xlabel("optimizer step")
    axes[0, 0].set_xlim(left=0)  # shared by all four
    fig.suptitle(training_title(log))
    return fig
