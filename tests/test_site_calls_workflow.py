"""The site_calls rule in the real Snakemake workflow on the A. thaliana slice of
test_calling_workflow.py (3 genes, a made-up scores table): part of `rule all` when the pipeline
makes the calls, and a run of its target with every output readable."""

from __future__ import annotations

import json

import polars as pl

from tests.test_calling_workflow import scores_workdir
from tests.workflow_helpers import planned_rules, snakemake, write_config
from workflow_scripts.sites.outputs import TABLE_COLUMNS

TARGET = "results/sites/site_metrics.json"
# 3 genes: 3 folds; a small tree and fewer replicates keep the run short
SITES = {"sites": {"folds": 3, "bootstrap_replicates": 200, "tree": {"max_iter": 20}}}


def test_rule_all_makes_site_calls_when_the_pipeline_makes_the_calls(tmp_path):
    config = scores_workdir(tmp_path)
    result = snakemake(tmp_path, "-n", "--configfile", str(config))
    assert result.returncode == 0, result.stderr[-3000:]
    assert "site_calls" in planned_rules(result.stdout)


def test_site_calls_runs_on_the_slice_and_writes_calls_beds_and_metrics(tmp_path):
    config = scores_workdir(tmp_path)
    sites = write_config(tmp_path, "sites.yaml", SITES)
    result = snakemake(tmp_path, TARGET, "--configfile", str(config), str(sites))
    assert result.returncode == 0, result.stderr[-4000:]
    metrics = json.loads((tmp_path / TARGET).read_text())
    assert metrics["counts"]["sites"] == 31 and metrics["counts"]["gene_clusters"] == 3
    assert set(metrics["calls"]) == {"base_threshold", "base_tuned", "tree"}
    assert set(metrics["differences"]) == {"tree - base_tuned", "base_tuned - base_threshold"}
    calls = pl.read_parquet(tmp_path / "results/sites/corrected_calls.parquet")
    assert tuple(calls.columns) == TABLE_COLUMNS
    assert calls.filter(pl.col("is_candidate")).height == sum(metrics["counts"]["candidates"].values())
    assert calls.filter(pl.col("is_true_site")).group_by("fold").len().height == 3
    for name, column in (("tree_calls", "call_tree"), ("base_calls", "call_base_threshold")):
        header, *lines = (tmp_path / f"results/sites/{name}.bed").read_text().splitlines()
        assert header.startswith("track name=")
        assert len(lines) == calls[column].sum()
        assert all(len(line.split("\t")) == 6 for line in lines)
    log = (tmp_path / "logs/site_calls.log").read_text()
    assert "fold 3 of 3:" in log and metrics["answer"] in log
    assert (tmp_path / "results/benchmarks/site_calls.tsv").is_file()
