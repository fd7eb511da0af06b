"""workflow/rule_files.py: the files the rules read and the workflow's targets, as the config says
(the input functions rules/*.smk call)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tests.unit.test_stage import demo_config
from workflow_scripts import layout
from workflow_scripts.errors import InputError
from workflow_scripts.workflow.rule_files import RuleFiles

RUN = SimpleNamespace(experiment="fp_vs_tp")


def scores_run(**calling) -> RuleFiles:
    config = demo_config(
        calling={"start": "scores", "scores": "scores.parquet", "annotation": "genes.gtf", **calling}
    )
    return RuleFiles(config, ("fp_vs_tp",), ())


def test_calls_from_the_user_read_no_scores_and_make_no_shards():
    files = RuleFiles(demo_config(), ("fp_vs_tp",), ())
    assert files.calling_start() == "calls"
    assert set(files.extract_inputs(RUN)) == {"index", "sequence", "calls"}
    assert files.score_shard_outputs() == [] and files.calls_summary_input() == []
    assert not files.makes_site_calls()


def test_the_scores_behind_the_calls_are_extract_inputs():
    files = scores_run()
    inputs = files.extract_inputs(RUN)
    assert inputs["scores"] == ["scores.parquet"] and inputs["genes"] == layout.ANNOTATION_GENES
    assert inputs["calls"] == layout.CALLS_TABLE and files.makes_site_calls()


def test_shards_are_numbered_1_to_n_of_n():
    files = scores_run()
    config = {**files.config, "calling": {**files.config["calling"], "base_model": {"shards": 3}}}
    shards = RuleFiles(config, (), ()).shard_files(layout.SCORE_SHARD, layout.SCORE_SHARD_RECORD)
    assert shards[:3] == [f"results/base_model/shards/{i}-of-3.parquet" for i in (1, 2, 3)]
    assert shards[3:] == [f"results/base_model/shards/{i}-of-3.regions.json" for i in (1, 2, 3)]


def test_site_model_runs_are_site_calls_inputs():
    runs = (layout.site_fold_run(1), layout.site_fold_run(2))
    files = RuleFiles(scores_run().config, ("fp_vs_tp",), runs)
    assert files.site_model_inputs("weights") == [f"results/{run}/model/model.pt" for run in runs]
    assert files.site_model_inputs("predictions") == [
        f"results/{run}/evaluation/predictions.parquet" for run in runs
    ]
    assert RuleFiles(files.config, (), ()).site_model_inputs("windows") == []
    assert files.site_windows_outputs() == [f"results/{run}/windows.parquet" for run in runs]


def test_predict_needs_its_calls_table():
    files = RuleFiles(demo_config(), ("fp_vs_tp",), ())
    with pytest.raises(InputError, match="predict.calls"):
        files.predict_inputs(RUN)
    files = RuleFiles(demo_config(predict={"calls": "new.tsv", "name": "new"}), ("a", "b"), ())
    assert files.prediction_outputs(RUN) == [
        "results/a/predictions/new.parquet",
        "results/b/predictions/new.parquet",
    ]
    inputs = files.predict_inputs(RUN)
    assert inputs["calls"] == "new.tsv" and inputs["index"] == layout.GENOME_INDEX
    assert inputs["model"] == "results/fp_vs_tp/model/model.pt"


def test_all_makes_every_experiments_plots_metrics_and_the_summary():
    outputs = RuleFiles(demo_config(), ("a", "b"), ()).experiment_outputs()
    assert {"results/a/evaluation/metrics.json", "results/b/evaluation/metrics.json"} <= set(outputs)
    assert "results/b/plots/roc.png" in outputs and "results/summary/summary.tsv" in outputs


def test_an_annotation_with_regions_scans_the_regions_and_site_calls_reads_them():
    """calling.regions with start annotation (issue 49): score_base_model scores the regions (a
    whole-region scan), the annotation labels, and site_calls and site_windows read the regions
    table; without it, the genes' spans as before."""
    calling = {"start": "annotation", "annotation": "genes.gtf", "base_model": {"weights": "models/"}}
    genes_only = RuleFiles(demo_config(calling=calling), ("fp_vs_tp",), ())
    assert genes_only.scored_spans() == layout.ANNOTATION_GENES and genes_only.scored_regions() == []
    scan = RuleFiles(demo_config(calling={**calling, "regions": "scan.bed"}), ("fp_vs_tp",), ())
    assert scan.scored_spans() == layout.REGIONS_TABLE and scan.scored_regions() == [layout.REGIONS_TABLE]
    assert scan.calling_regions() == ["scan.bed"] and scan.makes_site_calls()
    regions_start = {"start": "regions", "regions": "scan.bed", "base_model": {"weights": "models/"}}
    regions = RuleFiles(demo_config(calling=regions_start, sites={"transfer": "rescorer/"}), (), ())
    assert regions.scored_spans() == layout.REGIONS_TABLE and regions.scored_regions() == []
