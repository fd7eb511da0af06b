"""site_calls' results at the end of a run and in the report (sites/summary.py), and the report's
text rendered as Snakemake renders it, for runs that made the summary, the site calls or both."""

from __future__ import annotations

import io
import json
import os
import re
from pathlib import Path
from types import SimpleNamespace

import jinja2
import pytest
import yaml
from docutils.core import publish_parts
from threadpoolctl import threadpool_limits

from tests.site_fixtures import settings
from tests.unit.test_site_rescorer import fitted, transfer_report
from tests.workflow_helpers import ROOT
from workflow_scripts.config.sections import schema
from workflow_scripts.config.validate import validate_config
from workflow_scripts.rules import site_summary
from workflow_scripts.sites.report import site_report
from workflow_scripts.sites.rescorer import fit_rescorer
from workflow_scripts.sites.summary import console_lines, print_site_results, summary_html


@pytest.fixture(scope="module")
def reports() -> dict[str, dict]:
    """A genome's own report, and another genome's with the first one's re-scorer transferred."""
    with threadpool_limits(limits=1, user_api="openmp"):
        found, items, predictions = fitted(seed=0)
        own = site_report(found, items, predictions, settings(), 0)
        rescorer = fit_rescorer(found, items, predictions, settings(), {"source": "chr1", "source_sites": 1})
        return {"own": own, "transfer": transfer_report(rescorer, seed=1)}


def test_the_console_table_lists_every_predictor_and_difference_then_the_answer(reports):
    report = reports["transfer"]
    lines = console_lines(report, "results/sites/site_metrics.json")
    assert lines[0].startswith("site_calls (results/sites/site_metrics.json), on held-out genes: 5 folds")
    names = [line.split()[0] for line in lines[2 : lines.index("")]]
    assert names == ["tree", "base_tuned", "base_threshold", "transfer_tree", "transfer_base_tuned"]
    tree = report["calls"]["tree"]["overall"]
    assert re.search(rf"{tree['precision']:.3f} +{tree['recall']:.3f} +{tree['f1']:.3f}", lines[2])
    first_blank = lines.index("")
    differences = lines[first_blank + 2 : lines.index("", first_blank + 1)]
    assert [line.split("  ")[0] for line in differences] == list(report["differences"])
    gain = report["differences"]["tree - base_tuned"]["overall"]["f1"]
    assert f"+{gain['estimate']:.3f}  [+{gain['low']:.3f}, +{gain['high']:.3f}]  better" in differences[0]
    assert lines[-1] == report["answer"]


def test_the_run_prints_the_results_only_when_it_wrote_them(reports, tmp_path):
    path = tmp_path / "site_metrics.json"
    stream = io.StringIO()
    print_site_results(path, stream=stream)  # no site_calls in this run's targets: nothing
    path.write_text(json.dumps(reports["own"]))
    print_site_results(path, since=path.stat().st_mtime + 1, stream=stream)  # an older run's
    assert stream.getvalue() == ""
    print_site_results(path, since=path.stat().st_mtime, stream=stream)
    assert stream.getvalue().rstrip().endswith(reports["own"]["answer"])
    assert "tree on the score profiles" in stream.getvalue()


def test_the_report_section_holds_both_tables_the_answer_and_the_provenance(reports, tmp_path):
    report = {**reports["transfer"], "provenance": None}
    html = summary_html(report)
    assert "<code>transfer_tree</code>" in html and "the source genome&#x27;s tree (chr1)" in html
    assert "Made from" not in html  # a job run by hand has no provenance
    metrics, out = tmp_path / "site_metrics.json", tmp_path / "site_summary.html"
    metrics.write_text(json.dumps(report))
    site_summary.main(["--metrics", str(metrics), "--out-html", str(out)])
    assert out.read_text() == html


WILDCARDS = SimpleNamespace(experiment="fp_vs_tp")  # a caption's job: one run's plot


def snakemake_report_text(template: Path, names: list[str], tmp_path: Path) -> str:
    """A report text rendered as Snakemake's report renders it: Jinja with `files`, then the
    link targets it appends for every file (`.. _<name>:`), then docutils; its system messages
    (warnings and errors: an unknown target, a bad directive) left in the HTML."""
    files = []
    for name in names:
        (tmp_path / name).write_text("<p>fragment</p>")
        files.append(SimpleNamespace(name=name, target=name, path=str(tmp_path / name)))
    config = validate_config(yaml.safe_load((ROOT / "config" / "config.yaml").read_text()), schema())
    links = "".join(f"\n.. _{f.target}: javascript:show('{f.path}')\n" for f in files)
    text = (
        jinja2.Environment()
        .from_string(template.read_text() + links)
        .render(snakemake=SimpleNamespace(config=config, wildcards=WILDCARDS), files=files, categories={})
    )
    return publish_parts(text, writer="html", settings_overrides={"report_level": 2})["html_body"]


@pytest.mark.parametrize(
    "names,title",
    [
        (["summary.html", "summary.png", "summary.tsv", "provenance.json"], "beat its baselines"),
        (["summary.html"], "beat its baselines"),  # a target without summary.tsv: was "Unknown target name"
        (["site_summary.html", "site_metrics.json", "tree_calls.bed"], "re-scoring improve"),
        (["summary.html", "summary.tsv", "site_summary.html", "errorseq_calls.bed"], "beat its baselines"),
        ([], "beat its baselines"),
    ],
)
def test_the_report_text_renders_without_docutils_errors_for_every_kind_of_run(names, title, tmp_path):
    html = snakemake_report_text(ROOT / "report" / "workflow.rst", names, tmp_path)
    assert "system-message" not in html, re.findall(
        r'system-message-title">(.*?)</p>.*?<p>(.*?)</p>', html, re.S
    )
    assert title in html
    assert ("Site-level re-scored calls" in html) == ("site_summary.html" in names)
    assert ("How to read this report" in html) == (
        "summary.html" in names or "site_summary.html" not in names
    )


@pytest.mark.parametrize("caption", sorted((ROOT / "report").rglob("*.rst")), ids=lambda path: path.name)
def test_every_caption_renders_without_docutils_errors(caption, tmp_path):
    if caption.name == "workflow.rst":
        return
    html = snakemake_report_text(caption, [], tmp_path)
    assert "system-message" not in html, caption
    assert os.path.getsize(caption) > 0
