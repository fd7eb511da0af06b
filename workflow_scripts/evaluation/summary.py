"""Every run side by side: summary.tsv, summary.png and summary.html (the summarize rule).

Read from the runs' metrics.json files only (artifacts.METRICS_FILE_FIELDS): the overall test
windows of each, the model against each baseline with 95% intervals, the paired differences and
their verdicts. A run is an experiment, or one of its folds or seeds (config/runs.py); an
experiment with several runs also gets their mean and standard deviation, the spread that one
split and one seed cannot show.

    summary.tsv   a row per run, then a mean and an sd row per experiment with several runs,
                  artifacts.summary_fields() (for scripts)
    summary.png   ROC-AUC and PR-AUC of every predictor with intervals, runs down the axis
    summary.html  the answer in a sentence per run, a compact table, where it came from
                  (provenance.json), the plot and the detailed tables (summary_html.py); the
                  report's front page shows it
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from workflow_scripts.artifacts import (
    SUMMARY_INTERVAL_SUFFIXES,
    SUMMARY_MEAN,
    SUMMARY_RUN,
    SUMMARY_SD,
    summary_aggregated_fields,
    summary_fields,
)
from workflow_scripts.comparison_fields import MODEL, OVERALL, comparison_rows
from workflow_scripts.config.runs import Run
from workflow_scripts.evaluation.answer import summary_sentences
from workflow_scripts.evaluation.plots.figure import save_figure
from workflow_scripts.evaluation.plots.inputs import read_metrics
from workflow_scripts.evaluation.summary_figure import summary_figure
from workflow_scripts.evaluation.summary_html import summary_html
from workflow_scripts.io_utils import atomic_path, write_json, write_text

ESTIMATE_KEYS = ("estimate", "low", "high")  # comparison_rows' fields behind SUMMARY_INTERVAL_SUFFIXES
DIFFERENCE_KEYS = ("difference", "difference_low", "difference_high")
STRING_COLUMNS = ("experiment", "group", "statistic", "threshold_mode", "matched_by_design")
INTEGER_COLUMNS = ("fold", "seed", "runs", "n", "n_positive", "n_genes")


def overall_rows(metrics: dict) -> list[dict]:
    """comparison_rows of the overall group, each with the experiment's name."""
    return [
        {"experiment": metrics["experiment"], **row}
        for row in comparison_rows(metrics["comparison"])
        if row["group"] == OVERALL
    ]


def run_identity(name: str, runs: Mapping[str, Run]) -> dict:
    """The identity columns of a run's row; a run the config does not know is its own group."""
    run = runs.get(name)
    if run is None:
        return {"experiment": name, "group": name, "fold": None, "seed": None}
    return {"experiment": name, "group": run.group, "fold": run.fold, "seed": run.seed}


def summary_row(metrics: dict, runs: Mapping[str, Run]) -> dict:
    """One run as artifacts.summary_fields(); what was not scored stays None."""
    overall = metrics["comparison"]["overall"]
    row: dict[str, Any] = {name: None for name in summary_fields()}
    row.update(
        {
            **run_identity(metrics["experiment"], runs),
            "statistic": SUMMARY_RUN,
            "runs": 1,
            "n": metrics["n"],
            "n_positive": metrics["n_positive"],
            "n_genes": overall["n_genes"],
            "threshold": metrics["threshold"],
            "threshold_mode": metrics["threshold_choice"]["mode"],
            **{key: metrics[key] for key in ("precision", "recall", "f1", "mcc")},
            "matched_by_design": ",".join(metrics["comparison"].get("matched_by_design", {})) or None,
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


def summary_table(documents: list[dict], runs: Mapping[str, Run] | None = None) -> pl.DataFrame:
    """A row per run, grouped by experiment in the order they first appear, each experiment with
    several runs followed by its mean and sd rows. The same run twice is refused."""
    names = [document["experiment"] for document in documents]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ValueError(f"the same run appears twice in the summary: {repeated}")
    run_rows = [summary_row(document, runs or {}) for document in documents]
    rows = []
    for group in dict.fromkeys(row["group"] for row in run_rows):
        members = [row for row in run_rows if row["group"] == group]
        rows += members + (spread_rows(group, members) if len(members) > 1 else [])
    return pl.DataFrame(rows, schema={name: column_type(name) for name in summary_fields()}, orient="row")


def spread_rows(group: str, members: list[dict]) -> list[dict]:
    """The mean and the sample sd over `members` (one experiment's run rows) of every aggregated
    column (artifacts.summary_aggregated_fields), each over the runs that have a value."""
    rows = []
    for statistic in (SUMMARY_MEAN, SUMMARY_SD):
        row: dict[str, Any] = {name: None for name in summary_fields()}
        row.update({"experiment": group, "group": group, "statistic": statistic, "runs": len(members)})
        for column in summary_aggregated_fields():
            values = pl.Series(column, [member[column] for member in members], dtype=pl.Float64)
            row[column] = values.mean() if statistic == SUMMARY_MEAN else values.std(ddof=1)
        rows.append(row)
    return rows


def column_type(name: str) -> pl.DataType:
    if name.startswith("verdict_") or name in STRING_COLUMNS:
        return pl.String()
    return pl.Int64() if name in INTEGER_COLUMNS else pl.Float64()


def spread_of(table: pl.DataFrame) -> list[dict]:
    """The mean and sd rows of summary_table's result."""
    return table.filter(pl.col("statistic") != SUMMARY_RUN).to_dicts()


@dataclass(frozen=True)
class Summary:
    documents: list[dict]  # each run's metrics.json
    table: pl.DataFrame  # summary.tsv

    def sentences(self) -> list[str]:
        """The answer in a sentence per run, then per experiment with several runs."""
        return summary_sentences(self.documents, spread_of(self.table))


def write_summary(
    metrics_paths: list[str],
    out_table: str,
    out_plot: str,
    out_html: str,
    runs: Mapping[str, Run] | None = None,
    provenance: tuple[dict, str] | None = None,
) -> Summary:
    """Read every metrics.json first (a bad one is one line naming it), then write the files.
    runs: the workflow's runs by name (config/runs.py), for each run's experiment, fold and seed;
    provenance: (the document, where to write it), also shown at the top of summary.html."""
    documents = [read_metrics(path) for path in metrics_paths]
    table = summary_table(documents, runs)
    long_rows = [row for document in documents for row in overall_rows(document)]
    with atomic_path(out_table) as tmp:
        table.write_csv(tmp, separator="\t", null_value="")
    save_figure(summary_figure(long_rows), out_plot)
    document = provenance[0] if provenance else None
    if provenance:
        write_json(provenance[1], document)
    png = Path(out_plot).read_bytes()
    write_text(out_html, summary_html(documents, long_rows, png, spread_of(table), document))
    return Summary(documents, table)
