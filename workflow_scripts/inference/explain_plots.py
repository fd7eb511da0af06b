"""The explain figures (artifacts.EXPLAIN_PLOTS), from attribution.tsv and kmers.tsv.

* position_importance: the mean attribution at each position relative to the splice site, error
  and correct windows, one panel per splice type, with its 95% interval (±1.96 standard errors);
  a class averaged over fewer than FEW_WINDOWS windows says so in its legend.
* sequence_logo: the `top` positions of highest importance in error windows, one row per splice
  type; at each, the letters A, C, G, T stacked, each as tall as its share of the importance
  (bases pushing towards "error" above the axis, against it below). Drawn with matplotlib's
  TextPath, no logo library.
* kmer_enrichment: the `top` most enriched k-mers, -log10 q-value, with their window counts.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
from matplotlib.font_manager import FontProperties
from matplotlib.patches import PathPatch
from matplotlib.textpath import TextPath
from matplotlib.transforms import Affine2D

from workflow_scripts.artifacts import plot_file_name
from workflow_scripts.evaluation.plots.figure import new_figure, save_figure

BASE_COLOURS = {"A": "#2ca02c", "C": "#1f77b4", "G": "#ff7f0e", "T": "#d62728"}
CLASS_COLOURS = {"error": "#d62728", "correct": "#1f77b4"}
LETTER_FONT = FontProperties(family="DejaVu Sans", weight="bold")
MIN_Q = 1e-300
FEW_WINDOWS = 50  # fewer windows than this in a class: its attribution is flagged as noisy


def top_positions(attribution: pl.DataFrame, splice_type: str, n: int) -> pl.DataFrame:
    """The n positions of highest importance in the error windows of one splice type."""
    rows = attribution.filter((pl.col("splice_type") == splice_type) & (pl.col("class") == "error"))
    return rows.sort("importance", descending=True).head(n)


def splice_types(attribution: pl.DataFrame) -> list[str]:
    return sorted(attribution["splice_type"].unique().to_list())


def plot_position_importance(attribution: pl.DataFrame, path: Path, experiment: str) -> None:
    types = splice_types(attribution)
    fig, axes = new_figure(len(types), 1, figsize=(10, 2.8 * len(types)), sharex=True, squeeze=False)
    for ax, splice_type in zip(axes[:, 0], types):
        for name, colour in CLASS_COLOURS.items():
            rows = attribution.filter((pl.col("splice_type") == splice_type) & (pl.col("class") == name))
            if rows.height:
                n = int(rows["n_windows"].to_numpy().max())
                few = " — few: noisy" if n < FEW_WINDOWS else ""
                mean, half = rows["importance"].to_numpy(), 1.96 * rows["importance_se"].to_numpy()
                ax.fill_between(rows["position"], mean - half, mean + half, color=colour, alpha=0.2, lw=0)
                ax.plot(rows["position"], mean, color=colour, lw=1, label=f"{name} windows (n={n}{few})")
        ax.axvline(0, color="grey", ls="--", lw=0.8)
        ax.axhline(0, color="black", lw=0.5)
        ax.set_ylabel("mean attribution")
        ax.set_title(f"{experiment}: {splice_type}", fontsize=10)
        ax.legend(fontsize=8, loc="upper right")
    axes[-1, 0].set_xlabel("position relative to the splice site (nt; 0 = site)")
    save_figure(fig, path)


def draw_letter(ax, letter: str, x: float, bottom: float, height: float) -> None:
    """`letter` filling the box [x - 0.45, x + 0.45] x [bottom, bottom + height] (height may be < 0)."""
    glyph = TextPath((0, 0), letter, size=1, prop=LETTER_FONT)
    box = glyph.get_extents()
    transform = (
        Affine2D()
        .translate(-box.x0, -box.y0)
        .scale(0.9 / box.width, height / box.height)
        .translate(x - 0.45, bottom)
    )
    ax.add_patch(PathPatch(transform.transform_path(glyph), color=BASE_COLOURS[letter], lw=0))


def draw_stack(ax, x: float, shares: dict[str, float]) -> None:
    """Positive shares stacked upwards from 0 (largest on top), negative ones downwards."""
    up = down = 0.0
    for letter, value in sorted(shares.items(), key=lambda item: abs(item[1])):
        if value > 0:
            draw_letter(ax, letter, x, up, value)
            up += value
        elif value < 0:
            draw_letter(ax, letter, x, down, value)
            down += value


def plot_sequence_logo(attribution: pl.DataFrame, top: int, path: Path, experiment: str) -> None:
    types = splice_types(attribution)
    fig, axes = new_figure(len(types), 1, figsize=(max(6.0, 0.45 * top + 2), 2.6 * len(types)), squeeze=False)
    for ax, splice_type in zip(axes[:, 0], types):
        rows = top_positions(attribution, splice_type, top).sort("position")
        for x, row in enumerate(rows.iter_rows(named=True)):
            draw_stack(ax, x, {base: row[base] for base in BASE_COLOURS})
        values = rows.select(list(BASE_COLOURS)).to_numpy() if rows.height else np.zeros((1, 4))
        high, low = np.clip(values, 0, None).sum(1).max(), np.clip(values, None, 0).sum(1).min()
        ax.set_ylim(min(low, 0) * 1.1 - 1e-9, max(high, 0) * 1.1 + 1e-9)
        ax.set_xlim(-0.6, max(rows.height, 1) - 0.4)
        ax.set_xticks(range(rows.height), [str(p) for p in rows["position"]], fontsize=7)
        ax.axhline(0, color="black", lw=0.5)
        ax.set_ylabel("attribution")
        ax.set_title(
            f"{experiment}: {splice_type}, the {rows.height} most important positions in error windows",
            fontsize=10,
        )
    axes[-1, 0].set_xlabel("position relative to the splice site (nt)")
    save_figure(fig, path)


def plot_kmer_enrichment(kmers: pl.DataFrame, top: int, path: Path, experiment: str) -> None:
    rows = kmers.head(top).reverse()
    fig, ax = new_figure(figsize=(8, 0.3 * max(rows.height, 4) + 1.2))
    strength = -np.log10(np.clip(rows["q_value"].to_numpy(), MIN_Q, 1))
    ax.barh(range(rows.height), strength, color="#d62728")
    labels = [
        f"{r['kmer']}  ({r['error_windows']} / {r['correct_windows']})" for r in rows.iter_rows(named=True)
    ]
    ax.set_yticks(range(rows.height), labels, fontsize=8, family="monospace")
    ax.set_xlabel("-log10 q (one-sided Fisher, Benjamini-Hochberg)")
    ax.set_title(
        f"{experiment}: k-mers enriched in error windows (error / correct windows holding it)", fontsize=10
    )
    save_figure(fig, path)


def plot_explanations(
    attribution: pl.DataFrame,
    kmers: pl.DataFrame,
    top_positions_n: int,
    top_kmers: int,
    out_dir: Path,
    experiment: str,
) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    plot_position_importance(attribution, out_dir / plot_file_name("position_importance"), experiment)
    plot_sequence_logo(attribution, top_positions_n, out_dir / plot_file_name("sequence_logo"), experiment)
    plot_kmer_enrichment(kmers, top_kmers, out_dir / plot_file_name("kmer_enrichment"), experiment)
