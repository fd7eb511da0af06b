"""calling.start regions in the real Snakemake workflow: the A. thaliana slice of tests/data with
no annotation, two tiny random-weight SpliceAI-shaped models and a re-scorer folder fitted by
site_calls' code on made-up scores (with two tiny fold CNNs) run to corrected calls: a BED of
regions -> target_regions -> score_base_model in two shards -> rescore_sites, and nothing else."""

from __future__ import annotations

import json
import re

import polars as pl

from tests.rescore_fixtures import regions_workdir
from tests.workflow_helpers import snakemake

OUT = "results/rescored"


def job_counts(output: str) -> dict[str, int]:
    return {rule: int(count) for rule, count in re.findall(r"^(\w+)\s+(\d+)\s*$", output, re.MULTILINE)}


def test_a_genome_without_an_annotation_plans_only_scoring_and_rescoring(tmp_path):
    config = regions_workdir(tmp_path, bed=False)
    dry = snakemake(tmp_path, "-n", "--configfile", str(config))
    assert dry.returncode == 0, dry.stderr[-3000:]
    counts = job_counts(dry.stdout)
    assert {rule: n for rule, n in counts.items() if rule != "total"} == {
        "all": 1,
        "index_genome": 1,
        "target_regions": 1,
        "score_base_model": 2,
        "rescore_sites": 1,
    }, dry.stdout[-3000:]


def test_a_bed_of_regions_runs_to_corrected_calls(tmp_path):
    config = regions_workdir(tmp_path, bed=True)
    run = snakemake(tmp_path, "--configfile", str(config))
    assert run.returncode == 0, run.stderr[-4000:]
    regions = pl.read_parquet(tmp_path / "results/regions/regions.parquet")
    assert list(regions.select("start", "end", "strand").iter_rows()) == [
        (3001, 6000, "+"),
        (11001, 14000, "+"),
        (11001, 14000, "-"),
    ]
    calls = pl.read_parquet(tmp_path / OUT / "corrected_calls.parquet")
    inside = ((pl.col("position") > 3000) & (pl.col("position") <= 6000) & (pl.col("strand") == "+")) | (
        pl.col("position") > 11000
    )
    assert calls.height > 0 and calls.filter(~inside).height == 0
    assert set(calls["strand"]) == {"+", "-"}
    chosen = calls.filter("call_transfer_errorseq")
    bed_lines = (tmp_path / OUT / "corrected_calls.bed").read_text().splitlines()[1:]
    assert len(bed_lines) == chosen.height
    gff3 = (tmp_path / OUT / "corrected_calls.gff3").read_text()
    assert gff3.startswith("##gff-version 3\n##sequence-region NC_003070.9 1 14000\n")
    report = json.loads((tmp_path / OUT / "report.json").read_text())
    assert report["metrics"] is None and "no precision, recall, F1" in report["why_no_metrics"]
    assert report["corrected_calls"]["predictor"] == "transfer_errorseq"
    assert report["corrected_calls"]["calls"] == chosen.height
    assert report["provenance"]["calling"]["start"] == "regions"
    assert report["provenance"]["inputs"]["annotation"] is None
    assert not (tmp_path / "results/annotation").exists() and not (tmp_path / "results/calls").exists()
    again = snakemake(tmp_path, "-n", "--configfile", str(config))
    assert "Nothing to be done" in again.stdout + again.stderr, again.stdout[-2000:]

    # issue 49: the run closes naming its folder; --report is the corrected calls', not the demo's
    closing = [line for line in run.stderr.splitlines() if line.startswith("rescore_sites: ")][-2:]
    assert closing[0] == f"rescore_sites: {report['answer']}", closing
    assert closing[1].startswith(f"rescore_sites: corrected calls in {(tmp_path / OUT).resolve()}/: ")
    assert "rescore_sites: rescore_sites:" not in run.stderr
    made = snakemake(tmp_path, "--configfile", str(config), "--report", str(tmp_path / "report.html"))
    assert made.returncode == 0, made.stderr[-3000:]
    page = (tmp_path / "report.html").read_text()
    assert "corrected splice-site calls on a genome without an annotation" in page
    assert "Calls per region" in page and "Why these calls" in page
    assert "does the error model beat its baselines" not in page and "fp_vs_tp" not in page
    assert "Unknown target name" not in page and "System Message" not in page
