"""The labels of the files flagged for Snakemake's report. Its pages list a category's files by
their first label (by path without one): these orders give each file a numbered label, so a page
lists them as a reader looks at them."""

from __future__ import annotations

from workflow_scripts.artifacts import EXPLAIN_PLOTS, PLOTS

READING_ORDER = (
    "model_vs_baselines",
    "roc",
    "precision_recall",
    "confusion_matrix",
    "training_curves",
    "length_histogram",
)
FIGURE_ORDER = (
    *READING_ORDER,
    *(name for name in PLOTS if name not in READING_ORDER),
    *(f"explain: {name}" for name in EXPLAIN_PLOTS),
)
SUMMARY_ORDER = ("summary.html", "summary.png", "summary.tsv", "provenance.json")
SITE_REPORT_ORDER = (
    "site_summary.html",
    "site_metrics.json",
    "tree_calls.bed",
    "errorseq_calls.bed",
    "base_calls.bed",
)


def ordered_label(order: tuple[str, ...], name: str, key: str) -> dict[str, str]:
    """{key: "3. precision recall"}: the place of `name` in `order`, then its name."""
    digits = len(str(len(order)))
    place = f"{order.index(name) + 1:0{digits}d}"
    return {key: f"{place}. {name.replace('_', ' ')}"}


def figure_label(name: str) -> dict[str, str]:
    return ordered_label(FIGURE_ORDER, name, "figure")


def summary_label(name: str) -> dict[str, str]:
    return ordered_label(SUMMARY_ORDER, name, "file")


def site_file_label(name: str) -> dict[str, str]:
    return ordered_label(SITE_REPORT_ORDER, name, "file")
