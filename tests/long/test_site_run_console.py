"""What a user sees of a site-calls run (issue 38), in a real Snakemake run of `snakemake sites` on
the A. thaliana slice with two tiny base models: the console names each long job's log and ends
with site_calls' tables and answer; site_metrics.json and the corrected calls carry where the
results came from; `--report` gives the site-calls section without docutils errors."""

from __future__ import annotations

import hashlib
import json
import re

import polars as pl

from tests.calls_fixtures import FASTA, annotation_workdir
from tests.workflow_helpers import snakemake, stacked_config, write_config


def sha256(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_sites_run_shows_progress_ends_with_the_table_and_reports_the_site_section(tmp_path):
    config = annotation_workdir(tmp_path, shards=1)
    sites = write_config(tmp_path, "sites.yaml", stacked_config("sites"))
    run = snakemake(
        tmp_path, "sites", "--configfile", str(config), str(sites), output=tmp_path / "console.txt"
    )
    console = run.stdout
    assert run.returncode == 0, console[-4000:]
    assert re.search(
        r"^score_base_model shard 1 of 1: [\d,]+ genes \([\d,]+ nt\) on cpu; the full log: "
        r"tail -f logs/score_base_model/1-of-1\.log$",
        console,
        re.M,
    ), console[-4000:]
    assert re.search(r"^score_base_model shard 1 of 1 done: 100\.0% \(", console, re.M)
    assert (
        "site_calls: re-scoring the base model's calls out of fold over 3 folds; the full log: tail -f logs/site_calls.log"
        in console
    )
    metrics = json.loads((tmp_path / "results/sites/site_metrics.json").read_text())
    tail = console[console.rindex("site_calls (results/sites/site_metrics.json), on held-out genes") :]
    assert tail.splitlines()[1].split() == ["predictor", "what", "precision", "recall", "F1", "PR-AUC"]
    assert metrics["answer"] in tail and "F1 difference" in tail
    assert "Finished job" not in tail  # the table closes the run

    provenance = metrics["provenance"]
    assert provenance["inputs"]["genome"]["sha256"] == sha256(tmp_path / FASTA)
    assert [f["sha256"] for f in provenance["base_model"]["files"]] == [
        sha256(path) for path in sorted((tmp_path / "models").glob("*.h5"))
    ]
    assert provenance["config"]["digest"]  # the values and their digest; no config file paths
    assert provenance["config"]["values"]["sites"]["folds"] == 3 and provenance["packages"]["torch"]
    calls_metadata = pl.read_parquet_metadata(tmp_path / "results/sites/corrected_calls.parquet")
    assert json.loads(calls_metadata["errorseq_provenance"])["inputs"] == provenance["inputs"]

    report = tmp_path / "report.html"
    made = snakemake(tmp_path, "sites", "--configfile", str(config), str(sites), "--report", str(report))
    assert made.returncode == 0, made.stderr[-3000:]
    assert (
        "ERROR/" not in made.stderr + made.stdout and "Unknown target name" not in made.stderr + made.stdout
    )
    html = report.read_text(errors="replace")
    assert "does re-scoring improve the base model" in html and "Site-level re-scored calls" in html
    assert "Made from" in html  # site_summary.html shows the provenance
    for name in ("site_summary.html", "site_metrics.json", "tree_calls.bed", "base_calls.bed"):
        assert name in html
