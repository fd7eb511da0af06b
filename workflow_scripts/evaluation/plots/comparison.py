"""The model against its baselines: ROC-AUC and PR-AUC with 95% intervals, one point per predictor.

`model_vs_baselines_figure(metrics)` draws one experiment (a row of panels per group: all test
windows, then each splice type); evaluation/summary_figure.py draws every run of the summary with
its points. Both read the comparison through comparison_fields' names only. The
leak detectors (window length, the dinucleotide at the site) are drawn hollow, in grey, and
named as such: a model that does not beat them has learned the windows' shape, not biology.
"""

from __future__ import annotations

from dataclasses import dataclass

from matplotlib.figure import Figure

from workflow_scripts.comparison_fields import (
    BETTER,
    CHANCE,
    METRICS,
    OVERALL,
    WORSE,
    comparison_rows,
    predictor_kind,
)
from workflow_scripts.evaluation.plots.figure import (
    METRIC_LABELS,
    experiment_suffix,
    new_figure,
    note_in_axes,
    predictor_color,
    predictor_label,
)

VERDICT_COLORS = {BETTER: "forestgreen", WORSE: "firebrick"}  # NOT_BETTER: dark grey
SHORT_METRIC_LABELS = {"roc_auc": "ROC-AUC", "pr_auc": "PR-AUC"}
AUC_AXIS = (0.0, 1.03)  # a little past 1, so an AUC of exactly 1 shows whole


@dataclass(frozen=True)
class Point:
    """One predictor's estimate with its interval, at row `y` of a panel."""

    predictor: str
    y: float
    estimate: float | None
    low: float | None
    high: float | None
    verdict: str | None = None  # of the model against this predictor (None for the model)
    difference: tuple[float | None, float | None, float | None] | None = None  # estimate, low, high


def point_from_row(row: dict, y: float) -> Point:
    difference = (
        None
        if row["difference"] is None
        else (row["difference"], row["difference_low"], row["difference_high"])
    )
    return Point(row["predictor"], y, row["estimate"], row["low"], row["high"], row["verdict"], difference)


def draw_point(ax, point: Point, with_label: bool) -> None:
    if point.estimate is None:
        return
    color = predictor_color(point.predictor)
    hollow = predictor_kind(point.predictor) == "leak detector"
    if point.low is not None and point.high is not None:
        ax.plot([point.low, point.high], [point.y, point.y], color=color, lw=2.2, solid_capstyle="butt")
    ax.plot(
        point.estimate,
        point.y,
        "o" if point.predictor != "model" else "D",
        ms=7,
        color=color,
        markerfacecolor="white" if hollow else color,
        markeredgewidth=1.6,
        label=predictor_label(point.predictor) if with_label else None,
    )


def difference_panel(ax, rows: list[dict], metric: str) -> None:
    """model - baseline for each baseline on the rows of `group_panel`, coloured by the verdict."""
    chosen = [row for row in rows if row["metric"] == metric]
    for index, row in enumerate(chosen):
        if row["difference"] is None:
            continue
        color = VERDICT_COLORS.get(row["verdict"], "dimgrey")
        if row["difference_low"] is not None and row["difference_high"] is not None:
            ax.plot([row["difference_low"], row["difference_high"]], [-index, -index], color=color, lw=2.2)
        ax.plot(row["difference"], -index, "s", ms=6, color=color)
        ax.annotate(
            row["verdict"],
            xy=(1.0, -index),
            xycoords=("axes fraction", "data"),
            xytext=(-3, 5),
            textcoords="offset points",
            ha="right",
            fontsize=7,
            color=color,
        )
    ax.axvline(0, color="black", lw=0.9)
    ax.set_yticks(range(0, -len(chosen), -1), [])
    ax.set(ylim=(-len(chosen) + 0.4, 0.6), xlabel=f"model - predictor ({SHORT_METRIC_LABELS[metric]})")
    ax.grid(axis="x", alpha=0.3)


def chance_line(ax, metric: str, points: list[Point]) -> None:
    chance = next((p.estimate for p in points if p.predictor == CHANCE), None)
    level = 0.5 if metric == "roc_auc" else chance
    if level is not None:
        ax.axvline(level, ls="--", lw=0.9, color="grey", zorder=0)


def group_panel(ax, rows: list[dict], metric: str, title: str, with_labels: bool) -> None:
    """One group and metric: a line per predictor (model on top), verdicts at the right."""
    chosen = [row for row in rows if row["metric"] == metric]
    points = [point_from_row(row, -index) for index, row in enumerate(chosen)]
    if not points or all(p.estimate is None for p in points):
        note_in_axes(ax, "undefined: one class only")
    for point in points:
        draw_point(ax, point, with_labels)
    chance_line(ax, metric, points)
    ax.set_yticks([p.y for p in points], [predictor_label(p.predictor) for p in points], fontsize=8)
    ax.set(xlim=AUC_AXIS, ylim=(-len(points) + 0.4, 0.6), title=title, xlabel=METRIC_LABELS[metric])
    ax.grid(axis="x", alpha=0.3)


def group_order(rows: list[dict]) -> list[str]:
    groups = [OVERALL] + sorted({row["group"] for row in rows} - {OVERALL})
    return [group for group in groups if any(row["group"] == group for row in rows)]


def model_vs_baselines_figure(metrics: dict) -> Figure:
    """Every predictor's ROC-AUC and PR-AUC (95% intervals over genes), all windows and per splice
    type, each beside the model's paired difference to it (green: the model is better, red: worse,
    grey: not better: the interval holds 0)."""
    report = metrics["comparison"]
    rows = comparison_rows(report)
    groups = group_order(rows)
    fig, axes = new_figure(
        len(groups),
        2 * len(METRICS),
        figsize=(16, 2.6 + 2.2 * len(groups)),
        squeeze=False,
        gridspec_kw={"width_ratios": [3, 2] * len(METRICS)},
        layout="constrained",
    )
    for row_index, group in enumerate(groups):
        in_group = [row for row in rows if row["group"] == group]
        n = report["overall"] if group == OVERALL else report["per_splice_type"][group]
        label = "all test windows" if group == OVERALL else f"{group} sites"
        for col, metric in enumerate(METRICS):
            group_panel(
                axes[row_index, 2 * col],
                in_group,
                metric,
                f"{label} (n={n['n']:,}, {n['n_positive']:,} errors, {n['n_genes']:,} genes)",
                with_labels=False,
            )
            difference_panel(axes[row_index, 2 * col + 1], in_group, metric)
    skipped = "; ".join(f"{name} not scored: {why}" for name, why in report["skipped"].items())
    fig.suptitle(
        "Model vs baselines on the test genes: estimate and 95% interval (gene bootstrap, "
        f"{report['n_replicates']} replicates). Hollow grey: leak detector; dashed: chance.\n"
        "Right of each panel: model - predictor on the same replicates; green = better, "
        "red = worse, grey = not better (the interval holds 0)"
        + (f"\n{skipped}" if skipped else "")
        + experiment_suffix(metrics),
        fontsize=10,
    )
    return fig
