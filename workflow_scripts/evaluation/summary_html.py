"""summary.html: the answer first, then where it came from, then the figure and the details.

    the answer       a sentence per run (answer.py) and per experiment with several runs, then a
                     compact table: the model's estimate and model - baseline per run and metric
    made from        the provenance (provenance.py): inputs with hashes, calling, errorseq, config
    summary.png      drawn to be shown at its own size (about 1080 px wide)
    details          the runs' test metrics, every predictor with the paired difference and its
                     verdict, and for every experiment with several runs (folds, seeds) the mean ± sd

An HTML fragment (no <html> or <body>) with the plot inlined as a data URI, so the report's front
page can include the file as it is and a browser still opens it on its own. Intervals in brackets,
verdicts in colour, cells that do not wrap (a wide table scrolls); every value comes from the
experiments' metrics.json and provenance.json.
"""

from __future__ import annotations

import base64
from html import escape

from workflow_scripts.artifacts import SUMMARY_MEAN, SUMMARY_SD
from workflow_scripts.comparison_fields import (
    BASELINES,
    BETTER,
    CHANCE,
    METRICS,
    MODEL,
    PREDICTORS,
    WORSE,
    predictor_kind,
)
from workflow_scripts.evaluation.answer import says_nothing, summary_sentences
from workflow_scripts.evaluation.answer import with_interval as answer_with_interval
from workflow_scripts.evaluation.plots.figure import predictor_label
from workflow_scripts.evaluation.provenance_html import provenance_section
from workflow_scripts.evaluation.summary_figure import SUMMARY_WIDTH_PX

METRIC_NAMES = {"roc_auc": "ROC-AUC", "pr_auc": "PR-AUC"}
ESTIMATE_KEYS = ("estimate", "low", "high")
SHORT_NAMES = {
    "base_score": "base score",
    "kmer": "k-mer",
    "length": "length (leak)",
    "dinucleotide": "dinucleotide (leak)",
}
VERDICT_COLORS = {BETTER: "#1a7f37", WORSE: "#b42318"}
STYLE = (
    "<style>.errorseq-summary{font:13px sans-serif;max-width:none}"
    ".errorseq-summary .scroll{overflow-x:auto}"
    "table.errorseq{border-collapse:collapse;margin:0.6em 0 1.2em;width:auto}"
    "table.errorseq th,table.errorseq td{border:1px solid #ccc;padding:3px 7px;text-align:right;"
    "white-space:nowrap}"
    "table.errorseq th{background:#f3f3f3}table.errorseq .name{text-align:left}"
    "ul.errorseq-answer li{margin:0.3em 0}"
    ".errorseq-summary code::before,.errorseq-summary code::after{content:none}"  # the report's backticks
    # Snakemake's report shows this page in a 32rem column (prose max-w-lg) beside the rule graph,
    # centred in its pane: the column takes the pane's width (text wraps there, the figure shrinks to
    # it, wide tables scroll in place), the graph goes below it, and the pane starts at its top left.
    ".prose:has(.errorseq-summary){max-width:100%;min-width:0}"
    ".flex:has(> div > .prose .errorseq-summary){flex-wrap:wrap}"
    ".justify-center:has(.errorseq-summary){align-items:flex-start;justify-content:flex-start}</style>"
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


def answer_list(documents: list[dict], spread: list[dict]) -> str:
    items = "".join(f"<li>{escape(sentence)}</li>" for sentence in summary_sentences(documents, spread))
    return f'<ul class="errorseq-answer">{items}</ul>'


def short_interval(row: dict, keys: tuple[str, str, str], signed: bool = False) -> str:
    estimate, low, high = (row[key] for key in keys)
    return answer_with_interval({"estimate": estimate, "low": low, "high": high, "reason": None}, signed)


def compact_cell(row: dict | None) -> str:
    if row is None:
        return "–"
    text = short_interval(row, ("difference", "difference_low", "difference_high"), signed=True)
    color = VERDICT_COLORS.get(row["verdict"], "#555")
    return f'<span style="color:{color}" title="{escape(row["verdict"])}">{escape(text)}</span>'


def compact_baselines(long_rows: list[dict]) -> tuple[list[str], list[str]]:
    """The baselines of the compact table, and those left out for saying nothing in every run."""
    roc = [row for row in long_rows if row["metric"] == "roc_auc"]
    scored = [name for name in BASELINES if name != CHANCE and any(r["predictor"] == name for r in roc)]
    silent = [name for name in scored if all(says_nothing(r) for r in roc if r["predictor"] == name)]
    return [name for name in scored if name not in silent], silent


def compact_table(long_rows: list[dict], baselines: list[str]) -> str:
    """A row per run and metric: the model's estimate, then model - baseline per baseline
    (green: better, red: worse, grey: not better)."""
    header = [
        "run",
        "metric",
        "model [95%]",
        *(f"model − {SHORT_NAMES.get(name, name)}" for name in baselines),
    ]
    keyed = {(row["experiment"], row["predictor"], row["metric"]): row for row in long_rows}
    rows = []
    for experiment in dict.fromkeys(row["experiment"] for row in long_rows):
        for metric in METRICS:
            model = keyed[(experiment, MODEL, metric)]
            cells = [escape(experiment), METRIC_NAMES[metric], escape(short_interval(model, ESTIMATE_KEYS))]
            rows.append(cells + [compact_cell(keyed.get((experiment, name, metric))) for name in baselines])
    return table(header, rows, name_columns=2)


def inline_png(png: bytes) -> str:
    data = base64.b64encode(png).decode("ascii")
    return f'<img alt="summary.png" width="{SUMMARY_WIDTH_PX}" style="max-width:100%;height:auto" src="data:image/png;base64,{data}">'


def answer_section(documents: list[dict], long_rows: list[dict], spread: list[dict]) -> str:
    baselines, silent = compact_baselines(long_rows)
    left_out = "".join(
        f" {predictor_label(name)} is left out too: it scores every test window alike (ROC-AUC 0.5 by construction)."
        for name in silent
    )
    return (
        "<h3>Does the model beat its baselines?</h3>\n"
        f"{answer_list(documents, spread)}\n"
        "<p>ROC-AUC and PR-AUC on all test windows: the model's estimate, then model − baseline on the "
        "same bootstrap replicates, 95% intervals in brackets; green: better (the interval lies above 0), "
        "red: worse, grey: not better. Chance is left out: its ROC-AUC is 0.5 and its PR-AUC the share "
        f"of errors by construction (details below).{escape(left_out)}</p>\n"
        f'<div class="scroll">{compact_table(long_rows, baselines)}</div>\n'
    )


def details_section(documents: list[dict], long_rows: list[dict], spread: list[dict]) -> str:
    replicates = {document["comparison"]["n_replicates"] for document in documents}
    html = (
        f'<h3>Test metrics per run</h3>\n<div class="scroll">{experiments_table(documents)}</div>\n'
        "<h3>The model against its baselines (all test windows)</h3>\n"
        f"<p>95% intervals from {', '.join(map(str, sorted(replicates)))} gene-level bootstrap replicates; "
        "model − predictor is paired (same replicates). better: the interval lies above 0; worse: below; "
        "not better: it holds 0. Leak detectors measure what the window length or the site dinucleotide "
        "alone says.</p>\n"
        f'<div class="scroll">{comparison_table(long_rows)}</div>\n'
    )
    if not spread:
        return html
    return html + (
        "<h3>Across runs: folds and seeds (mean ± sd)</h3>\n"
        "<p>For every experiment with several runs (split.folds, train.repeats): the mean and the sample "
        "standard deviation of each run's estimate, and of the model − predictor difference. The sd is "
        "the spread between splits and seeds, which one run's bootstrap interval does not show.</p>\n"
        f'<div class="scroll">{spread_table(spread)}</div>\n'
    )


def summary_html(
    documents: list[dict],
    long_rows: list[dict],
    png: bytes,
    spread: list[dict] | None = None,
    provenance: dict | None = None,
) -> str:
    """The fragment (module docstring). `spread`: summary.tsv's mean/sd rows; `provenance`: the
    provenance document (its block is left out without one)."""
    made_from = provenance_section(provenance) if provenance else ""
    return (
        f'<div class="errorseq-summary">{STYLE}\n'
        f"{answer_section(documents, long_rows, spread or [])}{made_from}\n{inline_png(png)}\n"
        f"{details_section(documents, long_rows, spread or [])}</div>\n"
    )
