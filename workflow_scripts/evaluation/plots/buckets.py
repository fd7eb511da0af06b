"""Window lengths with the length buckets: edges, counts, batch sizes and padding efficiency."""

from __future__ import annotations

import matplotlib.ticker as mticker
import matplotlib.transforms as mtransforms
import numpy as np
import polars as pl
from matplotlib.figure import Figure

from workflow_scripts.evaluation.plots.figure import CLASS_NAMES, new_figure

BINS = 60
# Bars use the lower part of the log y axis; the bucket labels hang from the top.
BAR_SHARE_OF_HEIGHT = 0.6
MAIN_EFFICIENCIES = ("plan", "pad_to_max")


def format_efficiency(value: float) -> str:
    return f"{value:.1%}" if 0 <= value <= 1 else f"{value:.3g}"


def efficiency_title(bucket_summary: dict) -> str:
    efficiency = bucket_summary["padding_efficiency"]
    return (
        f"padding efficiency (real / padded tokens): {format_efficiency(efficiency['plan'])} with length"
        f" buckets\nvs {format_efficiency(efficiency['pad_to_max'])} when padding every batch to the "
        "longest window"
    )


def add_other_efficiencies_to_legend(ax, bucket_summary: dict) -> None:
    for key, value in bucket_summary["padding_efficiency"].items():
        if key not in MAIN_EFFICIENCIES:
            ax.plot(
                [], [], " ", label=f"padding efficiency, {key.replace('_', ' ')}: {format_efficiency(value)}"
            )


def length_bins(token_lengths: np.ndarray, boundaries: list) -> tuple[np.ndarray, bool]:
    """Histogram bin edges, and whether to use a log x axis (when lengths span > 16x)."""
    low = max(float(token_lengths.min()), 1.0)
    high = max(float(token_lengths.max()), float(max(boundaries)))
    if high / low > 16:
        return np.geomspace(low, high * 1.02, BINS + 1), True
    return np.linspace(0, high * 1.02, BINS + 1), False


def use_log_length_axis(ax, boundaries: list) -> None:
    ax.set_xscale("log")
    ax.set_xticks([float(boundary) for boundary in boundaries], [f"{boundary:g}" for boundary in boundaries])
    ax.xaxis.set_minor_formatter(mticker.NullFormatter())


def use_log_count_axis(ax, highest_bar: float) -> None:
    """Log y: one crowded bin does not flatten the rest. The top leaves room for the labels."""
    ax.set_yscale("log")
    bottom = 0.7  # a bin with one window still shows
    top = bottom * (max(highest_bar, 1.0) / bottom) ** (1 / BAR_SHARE_OF_HEIGHT)
    ax.set_ylim(bottom, top)


def label_buckets(ax, bucket_summary: dict) -> None:
    """Dashed line at each bucket edge; each bucket's count written just below its upper edge."""
    to_axes_height = mtransforms.blended_transform_factory(ax.transData, ax.transAxes)
    for boundary in bucket_summary["boundaries"]:
        ax.axvline(boundary, color="crimson", ls="--", lw=1)
    for entry in bucket_summary["buckets"]:
        ax.text(
            entry["upper"],
            0.98,
            f"bucket {entry['bucket']}: {entry['count']:,} windows\nbatch size {entry['batch_size']} ",
            rotation=90,
            ha="right",
            va="top",
            fontsize=7.5,
            color="crimson",
            transform=to_axes_height,
        )


def one_length_figure(token_lengths: np.ndarray) -> Figure:
    """Every window one length (window.flank fixes it): a bar would read "100% vs 100%"; say it once."""
    fig, ax = new_figure(figsize=(8, 1.6))
    ax.axis("off")
    ax.text(
        0.5,
        0.5,
        f"All {token_lengths.size:,} windows are {token_lengths[0]:g} tokens long (window.flank fixes the length):\n"
        "one length bucket, no padding, and length cannot tell the classes apart.",
        ha="center",
        va="center",
        fontsize=11,
    )
    return fig


def length_histogram_figure(manifest: pl.DataFrame, bucket_summary: dict) -> Figure:
    """Token lengths of all windows, stacked by class, on a log count axis, with the buckets."""
    token_lengths = manifest["token_length"].to_numpy().astype(float)
    if np.unique(token_lengths).size == 1:
        return one_length_figure(token_lengths)
    labels = manifest["label"].to_numpy()
    boundaries = bucket_summary["boundaries"]
    bins, log_lengths = length_bins(token_lengths, boundaries)
    fig, ax = new_figure(figsize=(11, 5.5))
    heights, _, _ = ax.hist(
        [token_lengths[labels == 0], token_lengths[labels == 1]],
        bins=bins,
        stacked=True,
        color=["steelblue", "darkorange"],
        label=list(CLASS_NAMES),
    )
    use_log_count_axis(ax, float(np.max(heights)))
    if log_lengths:
        use_log_length_axis(ax, boundaries)
    ax.plot([], [], color="crimson", ls="--", lw=1, label="bucket upper edge")
    add_other_efficiencies_to_legend(ax, bucket_summary)
    label_buckets(ax, bucket_summary)
    ax.set(
        xlabel="window length (tokens)" + (", log scale" if log_lengths else ""),
        ylabel="number of windows (log scale)",
        title=f"Window lengths and length buckets (n={token_lengths.size:,})\n{efficiency_title(bucket_summary)}",
    )
    ax.legend(loc="upper left", fontsize=8, bbox_to_anchor=(1.01, 1))
    ax.grid(alpha=0.3, axis="y")
    return fig
