"""evaluate_base's figure: per site type, each model's top-k accuracies and AUPRC side by side."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
from matplotlib.figure import Figure  # noqa: E402

from workflow_scripts.base_training.metrics import CHANNELS, TOP_K  # noqa: E402
from workflow_scripts.io_utils import atomic_path  # noqa: E402


def metrics_figure(report: dict) -> Figure:
    figure = Figure(figsize=(13, 4.2), layout="constrained")
    axes = figure.subplots(1, len(CHANNELS) + 1, sharey=True, width_ratios=[5] * len(CHANNELS) + [2])
    names = list(report["models"])
    columns = [f"top-{k:g}" for k in TOP_K] + ["AUPRC"]
    width = 0.8 / max(len(names), 1)
    for ax, site in zip(axes[:-1], CHANNELS, strict=True):
        for i, name in enumerate(names):
            values = report["models"][name][site]
            heights = [values["top_k"][str(k)] for k in TOP_K] + [values["auprc"]]
            positions = [c + (i - (len(names) - 1) / 2) * width for c in range(len(columns))]
            ax.bar(positions, heights, width, label=name)
        ax.set_xticks(range(len(columns)), columns)
        ax.set_ylim(0, 1)
        sites = report["models"][names[0]][site]["sites"]
        ax.set_title(f"{site}s ({sites:,} in {report['positions']:,} test nt)")
    axes[0].set_ylabel("top-k accuracy (k x true sites) / AUPRC / F1")
    settings = report["site_calls"]
    picked = all("site_f1_picked" in report["models"][name] for name in names)
    for i, name in enumerate(names):
        values = report["models"][name]
        if picked:  # beside it, hatched: at the model's own threshold (validation's)
            axes[-1].bar(i - 0.2, values["site_f1"]["f1"], 0.4, color=f"C{i}", label=name)
            axes[-1].bar(i + 0.2, values["site_f1_picked"]["f1"], 0.4, color=f"C{i}", hatch="//", alpha=0.6)
        else:
            axes[-1].bar(i, values["site_f1"]["f1"], 0.8, color=f"C{i}", label=name)
    axes[-1].set_xticks(range(len(names)), names, rotation=30, ha="right", fontsize=8)
    own = ", hatched: at validation's own" if picked else ""
    axes[-1].set_title(f"site F1 at {settings['threshold']:g}{own} (±{settings['window']} nt)", fontsize=9)
    axes[-1].legend(loc="lower right", fontsize=8)
    figure.suptitle(f"base models on base_data's held-out test blocks ({report['units']:,} gene clusters)")
    return figure


def save_metrics_figure(report: dict, path) -> None:
    figure = metrics_figure(report)
    with atomic_path(path) as tmp:
        figure.savefig(tmp, format="png", dpi=120)
