"""Every experiment side by side: summary.tsv, summary.png and summary.html (the summarize rule).

Read from the experiments' metrics.json files only (artifacts.METRICS_FILE_FIELDS): the overall
test windows of each, the model against each baseline with 95% intervals, the paired differences
and their verdicts.

    summary.tsv   one row per experiment, artifacts.summary_fields() (for scripts)
    summary.png   ROC-AUC and PR-AUC of every predictor with intervals, experiments down the axis
    summary.html  the plot and readable tables (summary_html.py); the report's front page shows it
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from workflow_scripts.artifacts import (
    SUMMARY_ID_FIELDS,
    SUMMARY_INTERVAL_SUFFIXES,
    summary_fields,
)
from workflow_scripts.evaluation.comparison_fields import MODEL, OVERALL, comparison_rows
from workflow_scripts.evaluation.plots.comparison import summary_figure
from workflow_scripts.evaluation.plots.figure import save_figure
from workflow_scripts.evaluation.plots.inputs import read_metrics
from workflow_scripts.evaluation.summary_html import summary_html
from workflow_scripts.io_utils import atomic_path, write_text

ESTIMATE_KEYS = ("estimate", "low", "high")  # comparison_rows' fields behind SUMMARY_INTERVAL_SUFFIXES
DIFFERENCE_KEYS = ("difference", "difference_low", "difference_high")


def overall_rows(metrics: dict) -> list[dict]:
    """comparison_rows of the overall group, each with the experiment's name."""
    return [
        {"experiment": metrics["experiment"], **row}
        for row in comparison_rows(metrics["comparison"])
        if row["group"] == OVERALL
    ]


def summary_row(metrics: dict) -> dict:
    """One experiment as artifacts.summary_fields(); what was not scored stays None."""
    overall = metrics["comparison"]["overall"]
    row = {name: None for name in summary_fields()}
    row.update(
        {
            "experiment": metrics["experiment"],
            "n": metrics["n"],
            "n_positive": metrics["n_positive"],
            "n_genes": overall["n_genes"],
            "threshold": metrics["threshold"],
            "threshold_mode": metrics["threshold_choice"]["mode"],
            **{key: metrics[key] for key in ("precision", "recall", "f1", "mcc")},
        }
    )
    for entry in overall_rows(metrics):
        predictor, metric = entry["predictor"], entry["metric"]
        for suffix, key in zip(SUMMARY_INTERVAL_SUFFIXES, ESTIMATE_KEYS):
            row[f"{predictor}_{metric}{suffix}"] = entry[key]
        if predictor != MODEL:
            for suffix, key in zip(SUMMARY_INTERVAL_SUFFIXES, DIFFERENCE_KEYS):
                row[f"{MODEL}_minus_{predictor}_{metric}{suffix}"] = entry[key]
            row[f"verdict_{predictor}_{metric}"] = entry["verdict"]
    unknown = set(row) - set(summary_fields())
    if unknown:
        raise ValueError(f"summary row has undeclared columns {sorted(unknown)}")
    return row


def summary_table(documents: list[dict]) -> pl.DataFrame:
    """One row per experiment in the given order; the same experiment twice is refused."""
    keys = [tuple(document[field] for field in SUMMARY_ID_FIELDS) for document in documents]
    repeated = sorted({key for key in keys if keys.count(key) > 1})
    if repeated:
        raise ValueError(f"the same experiment appears twice in the summary: {repeated}")
    rows = [summary_row(document) for document in documents]
    return pl.DataFrame(rows, schema={name: column_type(name) for name in summary_fields()}, orient="row")


def column_type(name: str) -> pl.DataType:
    if name.startswith("verdict_") or name in ("experiment", "threshold_mode"):
        return pl.String()
    return pl.Int64() if name in ("n", "n_positive", "n_genes") else pl.Float64()


def write_summary(metrics_paths: list[str], out_table: str, out_plot: str, out_html: str) -> pl.DataFrame:
    """Read every metrics.json first (a bad one is one line naming it), then write the three files."""
    documents = [read_metrics(path) for path in metrics_paths]
    table = summary_table(documents)
    long_rows = [row for document in documents for row in overall_rows(document)]
    with atomic_path(out_table) as tmp:
        table.write_csv(tmp, separator="\t", null_value="")
    save_figure(summary_figure(long_rows), out_plot)
    write_text(out_html, summary_html(documents, long_rows, Path(out_plot).read_bytes()))
    return table
