"""site_calls' results as tables, from site_metrics.json: as text on the console at the end of a
run (Snakefile `onsuccess:`, `print_site_results`) and as an HTML fragment for the report
(rule site_summary: results/sites/site_summary.html).

    predictors    every predictor of the run, this genome's then the transferred ones
                  (sites.transfer): precision, recall and F1 of its calls on held-out genes, and
                  the PR-AUC of the score it calls by
    differences   every pair site_metrics.json compares: F1 first - second with its 95%
                  gene-cluster bootstrap interval and verdict
    whole region  every predictor's F1 on genes and over the whole region, its calls and FP by
                  location, and the pairs' whole-region differences (block-bootstrap intervals)
    answer        site_metrics.json's sentence
    made from     site_metrics.json's provenance, where it has one (the report only)
"""

from __future__ import annotations

import json
import os
import sys
from html import escape
from pathlib import Path
from typing import TextIO

from workflow_scripts import layout
from workflow_scripts.evaluation.provenance_html import provenance_section
from workflow_scripts.evaluation.summary_html import STYLE, VERDICT_COLORS, number, table
from workflow_scripts.sites.predictors import (
    DESCRIPTIONS,
    SCORE_COLUMNS,
    TRANSFER_BASE_TUNED,
    TRANSFER_ERRORSEQ,
    TRANSFER_TREE,
)

# predictor -> (what it is, the score it calls by), in the order the tables list them
PREDICTORS = {name: (what, SCORE_COLUMNS[name]) for name, what in DESCRIPTIONS.items()}
PREDICTOR_HEADER = ["predictor", "what", "precision", "recall", "F1", "PR-AUC"]
DIFFERENCE_HEADER = ["F1 difference", "estimate", "95% interval", "verdict"]


def predictor_rows(report: dict) -> list[list[str]]:
    """[name, what, precision, recall, F1, PR-AUC] of every predictor the report holds."""
    rows = []
    for name, (what, score) in PREDICTORS.items():
        if name not in report["calls"]:
            continue
        calls = report["calls"][name]["overall"]
        pr_auc = report["scores"].get(score, {}).get("overall", {}).get("pr_auc")
        if name in (TRANSFER_ERRORSEQ, TRANSFER_TREE, TRANSFER_BASE_TUNED):
            what = f"{what} ({report['transfer']['source']})"
        rows.append(
            [name, what, *(number(calls[key]) for key in ("precision", "recall", "f1")), number(pr_auc)]
        )
    return rows


def difference_rows(report: dict) -> list[list[str]]:
    """[pair, estimate, interval, verdict] of F1 for every pair of the report."""
    rows = []
    for pair, groups in report["differences"].items():
        f1 = groups["overall"]["f1"]
        estimate = "–" if f1["estimate"] is None else f"{f1['estimate']:+.3f}"
        if f1["low"] is None or f1["high"] is None:
            interval, verdict = "–", f1.get("reason") or "no interval"
        else:
            interval, verdict = f"[{f1['low']:+.3f}, {f1['high']:+.3f}]", f1["verdict"]
        rows.append([pair, estimate, interval, verdict])
    return rows


WHOLE_REGION_HEADER = [
    "predictor",
    "F1 on genes",
    "F1 whole region",
    "precision",
    "recall",
    "calls",
    "FP in genes",
    "FP antisense",
    "FP intergenic",
]


def whole_region_rows(report: dict) -> list[list[str]]:
    """Every predictor's F1 on genes and over the whole region, its whole-region precision, recall
    and calls, and its FP by location (sites/whole_region.py); [] for a report without them."""
    whole = report.get("whole_region")
    if not whole:
        return []
    rows = []
    for name in PREDICTORS:
        if name not in whole["calls"]:
            continue
        calls, fp = whole["calls"][name]["overall"], whole["false_positives_by_location"][name]
        rows.append(
            [
                name,
                number(report["calls"][name]["overall"]["f1"]),
                *(number(calls[key]) for key in ("f1", "precision", "recall")),
                f"{calls['tp'] + calls['fp']:,}",
                *(f"{fp[where]:,}" for where in ("gene", "antisense", "intergenic")),
            ]
        )
    return rows


def whole_region_scope(report: dict) -> str:
    whole = report["whole_region"]
    boot = whole["bootstrap"]
    if whole["scored"] != "regions":
        return "whole region: only the genes' spans were scored, so these are the in-gene items"
    return (
        f"whole region (every call in the scored regions counts): 95% block-bootstrap intervals over "
        f"{boot['blocks']:,} {boot['resampled_unit']}s ({boot['replicates']:,} replicates)"
    )


def scope(report: dict) -> str:
    """What the numbers are measured on."""
    counts, settings = report["counts"], report["settings"]
    return (
        f"held-out genes: {settings['folds']} folds over {counts['gene_clusters']:,} gene clusters, "
        f"{counts['sites']:,} annotated sites, 95% gene-cluster bootstrap intervals "
        f"({report['bootstrap']['replicates']:,} replicates)"
    )


def text_table(header: list[str], rows: list[list[str]], left: tuple[int, ...]) -> list[str]:
    """Columns padded to their widest cell: those in `left` to the left, the others to the right."""
    widths = [max(len(cell) for cell in column) for column in zip(header, *rows)]

    def line(cells: list[str]) -> str:
        return "  ".join(
            cell.ljust(width) if index in left else cell.rjust(width)
            for index, (cell, width) in enumerate(zip(cells, widths))
        ).rstrip()

    return [line(header), *(line(row) for row in rows)]


def console_lines(report: dict, path: str | Path) -> list[str]:
    """The tables and the answer, as the end of a run prints them."""
    return [
        f"site_calls ({path}), on {scope(report)}:",
        *text_table(PREDICTOR_HEADER, predictor_rows(report), left=(0, 1)),
        "",
        *text_table(DIFFERENCE_HEADER, difference_rows(report), left=(0, 3)),
        "",
        *whole_region_lines(report),
        report["answer"],
    ]


def whole_region_lines(report: dict) -> list[str]:
    rows = whole_region_rows(report)
    if not rows:
        return []
    if report["whole_region"]["scored"] != "regions":
        return [f"{whole_region_scope(report)} (calling.regions scans whole regions: docs/sites.md)", ""]
    return [
        f"{whole_region_scope(report)}:",
        *text_table(WHOLE_REGION_HEADER, rows, left=(0,)),
        "",
        *text_table(DIFFERENCE_HEADER, difference_rows(report["whole_region"]), left=(0, 3)),
        "",
    ]


def print_site_results(
    path: str | Path = layout.SITE_METRICS, since: float | None = None, stream: TextIO | None = None
) -> None:
    """The console's last lines: site_calls' tables and answer, where `path` exists and (with
    `since`, the time the run started) was written by this run."""
    path = Path(path)
    try:
        if since is not None and path.stat().st_mtime < since:
            return
        report = json.loads(path.read_text())
        lines = console_lines(report, os.path.relpath(path))
    except (OSError, json.JSONDecodeError, KeyError, TypeError):
        return  # nothing written, or by an errorseq of another layout: the log has the answer
    print("\n" + "\n".join(lines), file=stream or sys.stderr, flush=True)


def verdict_html(verdict: str) -> str:
    color = VERDICT_COLORS.get(verdict)
    return f'<span style="color:{color}">{escape(verdict)}</span>' if color else escape(verdict)


def summary_html(report: dict) -> str:
    """The report's site-calls section: an HTML fragment (no <html> or <body>)."""
    predictors = [
        [f"<code>{escape(name)}</code>", *map(escape, rest)] for name, *rest in predictor_rows(report)
    ]
    differences = [
        [f"<code>{escape(pair)}</code>", escape(estimate), escape(interval), verdict_html(verdict)]
        for pair, estimate, interval, verdict in difference_rows(report)
    ]
    made_from = provenance_section(report["provenance"]) if report.get("provenance") else ""
    whole = ""
    if whole_region_rows(report):
        whole_differences = [
            [f"<code>{escape(pair)}</code>", escape(estimate), escape(interval), verdict_html(verdict)]
            for pair, estimate, interval, verdict in difference_rows(report["whole_region"])
        ]
        whole_rows = [
            [f"<code>{escape(name)}</code>", *map(escape, rest)] for name, *rest in whole_region_rows(report)
        ]
        whole = (
            f"<p>{escape(whole_region_scope(report).capitalize())}.</p>\n"
            f'<div class="scroll">{table(WHOLE_REGION_HEADER, whole_rows, 1)}</div>\n'
            f'<div class="scroll">{table(DIFFERENCE_HEADER, whole_differences, 1)}</div>\n'
        )
    return (
        f'<div class="errorseq-summary">{STYLE}\n'
        f"<p>{escape(report['answer'])}</p>\n"
        f"<p>{escape(scope(report).capitalize())}.</p>\n"
        f'<div class="scroll">{table(PREDICTOR_HEADER, predictors, 2)}</div>\n'
        f'<div class="scroll">{table(DIFFERENCE_HEADER, differences, 1)}</div>\n'
        f"{whole}{made_from}</div>\n"
    )
