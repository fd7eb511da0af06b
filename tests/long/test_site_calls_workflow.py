"""The site_calls rule in the real Snakemake workflow on the A. thaliana slice of
test_calling_workflow.py (3 genes, a made-up scores table): part of `rule all` when the pipeline
makes the calls, and a run of its target with every output readable."""

from __future__ import annotations

import json
import pickle
import shutil

import numpy as np
import polars as pl

from tests.calls_fixtures import scores_workdir
from tests.workflow_helpers import planned_rules, snakemake, stacked_config, write_config
from workflow_scripts.sites.candidate_windows import candidate_ids
from workflow_scripts.sites.outputs import (
    ERRORSEQ_COLUMNS,
    KMER_COLUMNS,
    TABLE_COLUMNS,
    TRANSFER_COLUMNS,
    TRANSFER_ERRORSEQ_COLUMNS,
)

TARGET = "results/sites/site_metrics.json"
SITES = stacked_config("sites")


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
    assert set(metrics["calls"]) == {"base_threshold", "base_tuned", "tree", "kmer"}
    assert set(metrics["differences"]) == {
        "tree - base_tuned",
        "base_tuned - base_threshold",
        "tree - kmer",
        "kmer - base_tuned",
    }
    assert metrics["kmer"]["window_nt"] == 101 and metrics["kmer"]["max_k"] == 6  # window.flank, kmer_max_k
    calls = pl.read_parquet(tmp_path / "results/sites/corrected_calls.parquet")
    assert tuple(calls.columns) == TABLE_COLUMNS + KMER_COLUMNS
    assert calls.filter(pl.col("is_candidate")).height == sum(metrics["counts"]["candidates"].values())
    assert calls.filter(pl.col("is_true_site")).group_by("fold").len().height == 3
    for name, column in (("tree_calls", "call_tree"), ("base_calls", "call_base_threshold")):
        header, *lines = (tmp_path / f"results/sites/{name}.bed").read_text().splitlines()
        assert header.startswith("track name=")
        assert len(lines) == calls[column].sum()
        assert all(len(line.split("\t")) == 6 for line in lines)
    log = (tmp_path / "logs/site_calls.log").read_text()
    assert "fold 3 of 3:" in log and "kmer fold 3:" in log and metrics["answer"] in log
    assert (tmp_path / "results/benchmarks/site_calls.tsv").is_file()
    assert (tmp_path / "results/sites/errorseq_calls.bed").read_text().startswith('track name="errorseq"')
    check_transfer_of_its_own_rescorer(tmp_path, config, sites, metrics)
    check_turning_the_model_on_reruns_site_calls(tmp_path, config)
    check_rule_all_remakes_a_missing_site_calls_output(tmp_path, config, sites, tmp_path / "transfer.yaml")


def check_rule_all_remakes_a_missing_site_calls_output(tmp_path, *configs) -> None:
    """A work directory from an errorseq whose site_calls lacked an output (the rescorer folder): rule
    all plans site_calls again, since it asks for every output, not only site_metrics.json.
    `configs`: those of the last run, so the missing file is the only change."""
    same = ("--configfile", *map(str, configs))
    before = snakemake(tmp_path, "-n", *same)
    assert before.returncode == 0 and "site_calls" not in planned_rules(before.stdout), before.stdout[-2000:]
    shutil.rmtree(tmp_path / "results/sites/rescorer")
    planned = snakemake(tmp_path, "-n", *same)
    assert planned.returncode == 0, planned.stderr[-3000:]
    assert "site_calls" in planned_rules(planned.stdout)


def check_turning_the_model_on_reruns_site_calls(tmp_path, config) -> None:
    """sites.model on after a run without it: the trainings and site_calls are planned (an output
    set that changed with sites.model gave "Nothing to be done")."""
    on = write_config(tmp_path, "model.yaml", SITE_MODEL)
    planned = snakemake(tmp_path, "-n", TARGET, "--configfile", str(config), str(on))
    assert planned.returncode == 0, planned.stderr[-3000:]
    assert {"site_windows", "train", "site_calls"} <= set(planned_rules(planned.stdout))


def check_transfer_of_its_own_rescorer(tmp_path, config, sites, metrics) -> None:
    """sites.transfer with this run's re-scorer folder (copied: a rule cannot read its own output)
    reruns site_calls alone and adds the transferred predictors; the fitted tree, applied to the
    genes it was fitted on, calls at least as well as the out-of-fold one. A pickle or a folder
    of other settings fails the dry run in one line."""
    source = tmp_path / "source_rescorer"
    shutil.copytree(tmp_path / "results/sites/rescorer", source)
    manifest = json.loads((source / "rescorer.json").read_text())
    assert manifest["results"]["answer"] == metrics["answer"] and "base_model" in manifest["source"]
    assert set(manifest["files"]) == {"tree.npz"} and manifest["tree"]["n_features"] == 103
    check_a_wrong_transfer_fails_the_dry_run(tmp_path, config, sites, source)
    transfer = write_config(tmp_path, "transfer.yaml", {"sites": {**SITES["sites"], "transfer": str(source)}})
    configs = ("--configfile", str(config), str(sites), str(transfer))
    planned = snakemake(tmp_path, "-n", TARGET, *configs)
    assert planned.returncode == 0, planned.stderr[-3000:]
    assert set(planned_rules(planned.stdout)) == {"site_calls"}
    result = snakemake(tmp_path, TARGET, *configs)
    assert result.returncode == 0, result.stderr[-4000:]
    moved = json.loads((tmp_path / TARGET).read_text())
    assert {"transfer_tree", "transfer_base_tuned"} <= set(moved["calls"])
    assert moved["transfer"]["file"] == str(source) and moved["calls"]["tree"] == metrics["calls"]["tree"]
    assert moved["calls"]["transfer_tree"]["overall"]["f1"] >= metrics["calls"]["tree"]["overall"]["f1"]
    calls = pl.read_parquet(tmp_path / "results/sites/corrected_calls.parquet")
    assert tuple(calls.columns) == TABLE_COLUMNS + KMER_COLUMNS + TRANSFER_COLUMNS


def check_a_wrong_transfer_fails_the_dry_run(tmp_path, config, sites, source) -> None:
    """While the workflow is parsed: one line naming the file and the field, no job planned."""
    pickled = tmp_path / "rescorer.pkl"
    pickled.write_bytes(pickle.dumps({"format": "errorseq-site-rescorer/2"}))
    wrong = {"sites.transfer": (pickled, {}), "settings.flank": (source, {"flank": 10})}
    for field, (path, changed) in wrong.items():
        transfer = write_config(
            tmp_path, "wrong.yaml", {"sites": {**SITES["sites"], **changed, "transfer": str(path)}}
        )
        planned = snakemake(tmp_path, "-n", TARGET, "--configfile", str(config), str(sites), str(transfer))
        errors = [line for line in planned.stderr.splitlines() if line.startswith("errorseq: error:")]
        assert planned.returncode != 0 and len(errors) == 1, planned.stderr[-3000:]
        assert f": {field}: " in errors[0], errors


# sites.model: a tiny model, one epoch; 3 folds: 3 runs
SITE_MODEL = stacked_config("sites", "site-model")


def test_sites_model_is_off_by_default_and_plans_one_run_per_fold_when_on(tmp_path):
    config = scores_workdir(tmp_path)
    off = snakemake(tmp_path, "-n", TARGET, "--configfile", str(config))
    assert off.returncode == 0, off.stderr[-3000:]
    assert not {"site_windows", "train"} & set(planned_rules(off.stdout))
    on = write_config(tmp_path, "model.yaml", SITE_MODEL)
    planned = snakemake(tmp_path, "-n", TARGET, "--configfile", str(config), str(on))
    assert planned.returncode == 0, planned.stderr[-3000:]
    assert {"site_windows", "bucket", "train", "evaluate", "site_calls"} <= set(planned_rules(planned.stdout))
    assert "site_candidates_fold3" in planned.stdout and "site_candidates_fold4" not in planned.stdout


# site_calls, and three trainings through the train and evaluate rules (~7 min on 2 busy cores)
def test_sites_model_rescores_site_calls_candidates_in_the_same_folds(tmp_path):
    config = scores_workdir(tmp_path)
    model = write_config(tmp_path, "model.yaml", SITE_MODEL)
    result = snakemake(tmp_path, TARGET, "--configfile", str(config), str(model), timeout=1500)
    assert result.returncode == 0, result.stderr[-4000:]
    calls = pl.read_parquet(tmp_path / "results/sites/corrected_calls.parquet")
    assert tuple(calls.columns) == (*TABLE_COLUMNS, *KMER_COLUMNS, *ERRORSEQ_COLUMNS)
    candidates = calls.filter(pl.col("is_candidate")).with_columns(
        candidate_ids(calls.filter(pl.col("is_candidate")))
    )
    for fold in (1, 2, 3):
        windows = pl.read_parquet(tmp_path / f"results/site_candidates_fold{fold}/windows.parquet")
        # the same candidates in the same folds as site_calls
        joined = candidates.select("id", "fold").join(windows.select("id", "fold"), on="id", how="full")
        assert windows.height == joined.height == candidates.height
        assert (joined["fold"] == joined["fold_right"]).fill_null(False).all()
        tested = set(windows.filter(pl.col("split") == "test")["id"].to_list())
        assert tested == set(candidates.filter(pl.col("fold") == fold)["id"].to_list())
        assert fold not in windows.filter(pl.col("split") != "test")["fold"].to_list()  # val: other folds
        predictions = pl.read_parquet(
            tmp_path / f"results/site_candidates_fold{fold}/evaluation/predictions.parquet"
        )
        probabilities = candidates.join(predictions.select("id", "prob"), on="id")
        assert probabilities.height == len(tested)
        assert np.allclose(probabilities["errorseq_probability"], probabilities["prob"], atol=1e-6)
    metrics = json.loads((tmp_path / TARGET).read_text())
    assert set(metrics["calls"]) == {"base_threshold", "base_tuned", "tree", "kmer", "errorseq"}
    assert {"errorseq - tree", "errorseq - base_tuned", "errorseq - kmer"} <= set(metrics["differences"])
    assert set(metrics["thresholds"]["errorseq"]) == {"1", "2", "3"}
    errorseq = metrics["calls"]["errorseq"]["overall"]
    assert errorseq["tp"] + errorseq["fn"] == metrics["counts"]["sites"]
    header, *lines = (tmp_path / "results/sites/errorseq_calls.bed").read_text().splitlines()
    assert header.startswith('track name="errorseq"') and len(lines) == calls["call_errorseq"].sum()
    log = (tmp_path / "logs/site_calls.log").read_text()
    assert "errorseq's model's calls reach F1" in metrics["answer"] and metrics["answer"] in log
    check_transfer_of_its_deep_models(tmp_path, config, model)


def check_transfer_of_its_deep_models(tmp_path, config, model) -> None:
    """sites.transfer of a re-scorer written with sites.model carries the fold runs' models:
    applied here, each candidate's transfer_errorseq_probability is the mean of the three models'
    probabilities of the very windows site_windows cut for it (sequence and score profiles)."""
    from workflow_scripts.inference.predict_calls import TrainedModel

    source = tmp_path / "deep_rescorer"
    shutil.copytree(tmp_path / "results/sites/rescorer", source)
    assert {"fold1.safetensors", "fold3.json"} <= {path.name for path in source.iterdir()}
    transfer = write_config(
        tmp_path, "deep_transfer.yaml", {"sites": {**SITE_MODEL["sites"], "transfer": str(source)}}
    )
    result = snakemake(tmp_path, TARGET, "--configfile", str(config), str(model), str(transfer), timeout=900)
    assert result.returncode == 0, result.stderr[-4000:]
    metrics = json.loads((tmp_path / TARGET).read_text())
    assert {"transfer_errorseq - transfer_tree", "transfer_errorseq - transfer_base_tuned"} <= set(
        metrics["differences"]
    )
    assert "the mean of its deep models reaches F1" in metrics["answer"]
    calls = pl.read_parquet(tmp_path / "results/sites/corrected_calls.parquet").filter(pl.col("is_candidate"))
    assert calls.columns[-len(TRANSFER_ERRORSEQ_COLUMNS) :] == list(TRANSFER_ERRORSEQ_COLUMNS)
    windows = pl.read_parquet(tmp_path / "results/site_candidates_fold1/windows.parquet")
    probabilities = []
    for fold in (1, 2, 3):
        run = tmp_path / f"results/site_candidates_fold{fold}/model"
        trained = TrainedModel.from_files(str(run / "model.pt"), str(run / "model.json"), batch_size=64)
        features, profiles = trained.features(windows, "windows"), trained.profiles(windows, "windows")
        probabilities.append(
            trained.p_error(windows["sequence"].to_list(), windows["length"].to_numpy(), features, profiles)
        )
    expected = windows.select("id").with_columns(pl.Series("expected", np.mean(probabilities, axis=0)))
    joined = calls.with_columns(candidate_ids(calls)).join(expected, on="id")
    assert joined.height == calls.height
    assert np.allclose(joined["transfer_errorseq_probability"], joined["expected"], atol=1e-5)
