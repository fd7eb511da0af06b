"""summary.html: summary.png and the runs and the model-vs-baselines comparison as tables, then
for every experiment with several runs (folds, seeds) the mean ± sd of each predictor over them.

An HTML fragment (no <html> or <body>) with the plot inlined as a data URI, so the report's front
page can include the file as it is and a browser still opens it on its own. Numbers with 3
decimals, intervals in brackets, verdicts in colour; every value comes from the experiments'
metrics.json.
"""

from __future__ import annotations

import base64
from html import escape

from workflow_scripts.artifacts import SUMMARY_MEAN, SUMMARY_SD
from workflow_scripts.evaluation.comparison_fields import (
    BETTER,
    METRICS,
    MODEL,
    PREDICTORS,
    WORSE,
    predictor_kind,
)

METRIC_NAMES = {"roc_auc": "ROC-AUC", "pr_auc": "PR-AUC"}
VERDICT_COLORS = {BETTER: "#1a7f37", WORSE: "#b42318"}
STYLE = (
    "<style>table.errorseq{border-collapse:collapse;font:13px sans-serif;margin:0.6em 0 1.2em}"
    "table.errorseq th,table.errorseq td{border:1px solid #ccc;padding:3px 7px;text-align:right}"
    "table.errorseq th{background:#f3f3f3}table.errorseq td.name{text-align:left}</style>"
)


def number(value, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def with_interval(estimate, low, high, signed: bool = False) -> str:
    text = f"{estimate:+.3f}" if signed and estimate is not None else number(estimate)
    if low is None or high is None:
        return text
    return f"{text} [{low:+.3f}, {high:+.3f}]" if signed else f"{text} [{low:.3f}, {high:.3f}]"


def table(header: list[str], rows: list[list[str]], name_columns: int) -> str:
    head = "".join(f"<th>{escape(cell)}</th>" for cell in header)
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="name">{cell}</td>' if index < name_columns else f"<td>{cell}</td>"
            for index, cell in enumerate(row)
        )
        + "</tr>"
        for row in rows
    )
    return f'<table class="errorseq"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def experiments_table(documents: list[dict]) -> str:
    header = [
        "experiment",
        "test windows",
        "errors",
        "genes",
        "threshold",
        "precision",
        "recall",
        "F1",
        "MCC",
        "ROC-AUC",
        "PR-AUC",
    ]
    rows = []
    for document in documents:
        choice = document["threshold_choice"]
        threshold = f"{document['threshold']:.3f} ({'auto, ' + choice['split'] if choice['mode'] == 'auto' else 'fixed'})"
        rows.append(
            [
                escape(document["experiment"]),
                f"{document['n']:,}",
                f"{document['n_positive']:,}",
                f"{document['comparison']['overall']['n_genes']:,}",
                threshold,
                *(number(document[key]) for key in ("precision", "recall", "f1", "mcc", "roc_auc", "pr_auc")),
            ]
        )
    return table(header, rows, name_columns=1)


def verdict_cell(row: dict) -> str:
    if row["predictor"] == MODEL:
        return ""
    difference = with_interval(row["difference"], row["difference_low"], row["difference_high"], signed=True)
    color = VERDICT_COLORS.get(row["verdict"], "#555")
    return f'{difference} <b style="color:{color}">{escape(row["verdict"])}</b>'


def comparison_table(long_rows: list[dict]) -> str:
    header = ["experiment", "predictor", "kind"]
    for metric in METRICS:
        header += [f"{METRIC_NAMES[metric]} [95%]", f"model − predictor, {METRIC_NAMES[metric]} [95%]"]
    keyed = {(row["experiment"], row["predictor"], row["metric"]): row for row in long_rows}
    pairs = list(dict.fromkeys((row["experiment"], row["predictor"]) for row in long_rows))
    rows = []
    for experiment, predictor in pairs:
        cells = [escape(experiment), escape(predictor), escape(predictor_kind(predictor))]
        for metric in METRICS:
            row = keyed[(experiment, predictor, metric)]
            cells += [with_interval(row["estimate"], row["low"], row["high"]), verdict_cell(row)]
        rows.append(cells)
    return table(header, rows, name_columns=3)


def mean_sd(mean, sd, signed: bool = False) -> str:
    if mean is None:
        return "–"
    text = f"{mean:+.3f}" if signed else f"{mean:.3f}"
    return text if sd is None else f"{text} ± {sd:.3f}"


def spread_table(spread: list[dict]) -> str:
    """spread: summary.tsv's mean and sd rows (evaluation/summary.py), a pair per experiment."""
    header = ["experiment", "runs", "predictor", "kind"]
    for metric in METRICS:
        header += [
            f"{METRIC_NAMES[metric]} mean ± sd",
            f"model − predictor, {METRIC_NAMES[metric]} mean ± sd",
        ]
    by_key = {(row["group"], row["statistic"]): row for row in spread}
    rows = []
    for group in dict.fromkeys(row["group"] for row in spread):
        mean, sd = by_key[(group, SUMMARY_MEAN)], by_key[(group, SUMMARY_SD)]
        for predictor in PREDICTORS:
            if mean[f"{predictor}_{METRICS[0]}"] is None:
                continue  # not scored in any run
            cells = [escape(group), str(mean["runs"]), escape(predictor), escape(predictor_kind(predictor))]
            for metric in METRICS:
                estimate = f"{predictor}_{metric}"
                cells.append(mean_sd(mean[estimate], sd[estimate]))
                difference = f"{MODEL}_minus_{predictor}_{metric}"
                cells.append(
                    "" if predictor == MODEL else mean_sd(mean[difference], sd[difference], signed=True)
                )
            rows.append(cells)
    return table(header, rows, name_columns=4)


def inline_png(png: bytes) -> str:
    data = base64.b64encode(png).decode("ascii")
    return f'<img alt="summary.png" style="max-width:100%" src="data:image/png;base64,{data}">'


def summary_html(
    documents: list[dict], long_rows: list[dict], png: bytes, spread: list[dict] | None = None
) -> str:
    """The fragment: summary.png (its bytes), the runs' test metrics, the comparison, and the
    mean ± sd over the runs of every experiment that has several (`spread`: the mean/sd rows)."""
    replicates = {document["comparison"]["n_replicates"] for document in documents}
    html = (
        f"{STYLE}\n{inline_png(png)}\n"
        f"<h3>Test metrics per run</h3>\n{experiments_table(documents)}\n"
        "<h3>The model against its baselines (all test windows)</h3>\n"
        f"<p>95% intervals from {', '.join(map(str, sorted(replicates)))} gene-level bootstrap replicates; "
        "model − predictor is paired (same replicates). better: the interval lies above 0; worse: below; "
        "not better: it holds 0. Leak detectors measure what the windows' shape alone says.</p>\n"
        f"{comparison_table(long_rows)}\n"
    )
    if not spread:
        return html
    return html + (
        "<h3>Across runs: folds and seeds (mean ± sd)</h3>\n"
        "<p>For every experiment with several runs (split.folds, train.repeats): the mean and the sample "
        "standard deviation of each run's estimate, and of the model − predictor difference. The sd is "
        "the spread between splits and seeds, which one run's bootstrap interval does not show.</p>\n"
        f"{spread_table(spread)}\n"
    )
