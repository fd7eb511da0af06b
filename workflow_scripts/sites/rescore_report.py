"""What a `calling.start: regions` run reports (the rescore_sites rule): report.json and the page
`snakemake --report` shows (report.html, a fragment the report's front page embeds:
report/workflow.rst).

Both hold the result: the corrected calls per splice type and per region beside the base model's
own, which predictor made them and the evidence behind that choice (the re-scorer's out-of-fold
figures on its source genome, from its manifest), and where the result came from. Files are named
by their name and sha256, never by a path on the machine that ran (`names_only`): report.json and
the page travel, a path of /home/someone does not.
"""

from __future__ import annotations

import html
import json
import os
from pathlib import Path

import polars as pl

from workflow_scripts.calling.scores import SPLICE_TYPES
from workflow_scripts.sites.predictors import BASE_THRESHOLD, CALL_COLUMNS

REGION_ROWS_SHOWN = 50  # the page's per-region table; report.json has every region


def names_only(value):
    """`value` with every absolute path (a string) replaced by its last component."""
    if isinstance(value, dict):
        return {key: names_only(item) for key, item in value.items()}
    if isinstance(value, list):
        return [names_only(item) for item in value]
    if isinstance(value, str) and os.path.isabs(value) and "\n" not in value:
        return Path(value).name
    return value


def calls_by_region(table: pl.DataFrame, predictor: str) -> dict[str, dict[str, int]]:
    """Per region (the regions table's name, a strand each), in genome order: its candidates, the
    base model's calls at its threshold and the corrected calls, all and per splice type."""
    corrected, base = CALL_COLUMNS[predictor], CALL_COLUMNS[BASE_THRESHOLD]
    grouped = table.group_by("region", maintain_order=True).agg(
        pl.len().alias("candidates"),
        pl.col(base).sum().alias("base_calls"),
        pl.col(corrected).sum().alias("corrected_calls"),
        *[(pl.col(corrected) & (pl.col("splice_type") == t)).sum().alias(t) for t in SPLICE_TYPES],
    )
    return {row.pop("region"): {k: int(v) for k, v in row.items()} for row in grouped.iter_rows(named=True)}


def source_evidence(results: dict) -> dict:
    """What the re-scorer's manifest says of its source genome: each predictor's out-of-fold F1,
    the recommended predictor and why, and the sentence site_calls wrote there."""
    calls = results.get("calls") or {}
    return {
        "recommended": results.get("recommended"),
        "f1_on_source": {name: value.get("f1") for name, value in calls.items() if isinstance(value, dict)},
        "source_answer": results.get("answer"),
    }


def cell(value) -> str:
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, int):
        return f"{value:,}"
    return html.escape(str(value))


def table_html(header: list[str], rows: list[list]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{cell(v)}</td>" for v in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def report_html(report: dict) -> str:
    """The report's page: the answer, the calls per type and per region, the recommendation and
    its evidence, and the provenance (names and sha256)."""
    chosen = report["corrected_calls"]
    by_type = [
        [name, counts["calls"], *(counts[t] for t in SPLICE_TYPES)]
        for name, counts in report["calls"].items()
    ]
    regions = list(report["calls_by_region"].items())
    region_rows = [
        [name, c["candidates"], c["base_calls"], c["corrected_calls"], *(c[t] for t in SPLICE_TYPES)]
        for name, c in regions[:REGION_ROWS_SHOWN]
    ]
    more = len(regions) - len(region_rows)
    evidence = report["recommendation"]["evidence"]
    f1_rows = [[name, f1] for name, f1 in evidence["f1_on_source"].items() if f1 is not None]
    rescorer = report["rescorer"]
    inputs = (report.get("provenance") or {}).get("inputs") or {}
    files = [
        [role, fact.get("path", ""), fact.get("sha256", "")]
        for role, fact in inputs.items()
        if isinstance(fact, dict) and "sha256" in fact
    ]
    base_files = ((report.get("provenance") or {}).get("base_model") or {}).get("files") or []
    files += [["base model", fact.get("path", ""), fact.get("sha256", "")] for fact in base_files]
    if rescorer is not None:
        files.append(["re-scorer manifest", f"{rescorer['name']}/rescorer.json", rescorer["manifest_sha256"]])
    errorseq = report.get("errorseq") or {}
    parts = [
        "<div class='errorseq-rescored'>",
        f"<p><b>{html.escape(report['answer'])}</b></p>",
        "<h3>Calls per splice type</h3>",
        f"<p>The corrected calls are <code>{html.escape(chosen['predictor'])}</code>; "
        f"{html.escape(report['why_no_metrics'])}.</p>",
        table_html(["predictor", "calls", *SPLICE_TYPES], by_type),
        "<h3>Calls per region</h3>",
        table_html(["region", "candidates", "base calls", "corrected calls", *SPLICE_TYPES], region_rows),
        f"<p>{more:,} more regions in report.json.</p>" if more > 0 else "",
        "<h3>Why these calls: the re-scorer's evidence on its source genome</h3>",
        f"<p>{html.escape(report['recommendation']['why'])}</p>",
        table_html(["predictor (out of fold, source genome)", "F1"], f1_rows) if f1_rows else "",
        f"<p>{html.escape(evidence.get('source_answer') or '')}</p>",
        "<h3>Where this came from</h3>",
        table_html(["file", "name", "sha256"], files),
        f"<p>errorseq {cell(errorseq.get('version', ''))}, commit {cell(errorseq.get('commit', ''))}; "
        + (
            "no re-scorer.</p>"
            if rescorer is None
            else f"re-scorer <code>{html.escape(rescorer['name'])}</code> fitted on "
            f"{cell((rescorer.get('source') or {}).get('source', 'unknown'))}.</p>"
        ),
        "</div>",
    ]
    return "\n".join(part for part in parts if part) + "\n"


def closing_lines(folder: str | Path) -> list[str]:
    """A regions run's last lines (Snakefile `onsuccess:`): the answer, then where the outputs are
    (the folder as an absolute path: the user's shell may be elsewhere). None without a report."""
    report = Path(folder) / "report.json"
    if not report.is_file():
        return []
    answer = json.loads(report.read_text()).get("answer", "")
    where = Path(folder).resolve()
    return [
        f"rescore_sites: {answer}",
        f"rescore_sites: corrected calls in {where}/: corrected_calls.bed, corrected_calls.gff3, "
        "corrected_calls.parquet, report.json (snakemake --report report.html: the same as a page)",
    ]
