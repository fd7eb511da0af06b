"""The evaluate rule's entry point: its files are the artifacts.py shapes, its settings come from
`--config` (schema defaults, no argparse defaults), a bad setting is one line."""

import json

import numpy as np
import polars as pl
import pytest

from tests.evaluation_fixtures import make_windows, run_evaluate, write_buckets, write_untrained_model
from workflow_scripts.artifacts import (
    BASELINE_SCORE_PREFIX,
    EVALUATED_SPLIT,
    METRICS_FILE_FIELDS,
    NULLABLE_METRICS,
    PER_BUCKET_FIELDS,
    PREDICTION_COLUMNS,
    PREDICTION_DROPPED_WINDOW_COLUMNS,
    THRESHOLD_CHOICE_FIELDS,
)
from workflow_scripts.comparison_fields import BASELINES, REPORT_FIELDS
from workflow_scripts.config.sections import section_defaults
from workflow_scripts.errors import run_cli
from workflow_scripts.evaluation.predict import load_trained_model, predict_split
from workflow_scripts.metrics import binary_metrics, roc_auc
from workflow_scripts.rules.evaluate import STAGE, main


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    directory = tmp_path_factory.mktemp("evaluate")
    windows = make_windows(directory / "windows.parquet", n=300)
    buckets = write_buckets(windows, directory)
    return {"windows": windows, **buckets, "model": write_untrained_model(directory, 3001)}


def evaluate_into(trained, directory, config=None):
    return run_evaluate(trained["windows"], trained["manifest"], trained["model"], directory, config)


def test_files_are_the_declared_artifacts(trained, tmp_path):
    paths = evaluate_into(trained, tmp_path)
    metrics = json.loads(paths["metrics"].read_text())
    assert list(metrics) == list(METRICS_FILE_FIELDS)
    assert metrics["split"] == EVALUATED_SPLIT and metrics["experiment"] == "toy_experiment"
    assert metrics["per_bucket"] and all(
        list(entry) == list(PER_BUCKET_FIELDS) for entry in metrics["per_bucket"]
    )
    assert list(metrics["threshold_choice"]) == list(THRESHOLD_CHOICE_FIELDS)
    assert tuple(metrics["comparison"]) == REPORT_FIELDS
    predictions = pl.read_parquet(paths["predictions"])
    test_rows = pl.read_parquet(trained["manifest"]).filter(pl.col("split") == EVALUATED_SPLIT).height
    assert predictions.height == metrics["n"] == test_rows
    assert sum(entry["n"] for entry in metrics["per_bucket"]) == metrics["n"]


def test_predictions_keep_the_windows_call_columns_and_the_baseline_scores(trained, tmp_path):
    predictions = pl.read_parquet(evaluate_into(trained, tmp_path)["predictions"])
    windows = pl.read_parquet(trained["windows"])
    carried = [
        c for c in windows.columns if c not in (*PREDICTION_COLUMNS, *PREDICTION_DROPPED_WINDOW_COLUMNS)
    ]
    baseline_columns = [f"{BASELINE_SCORE_PREFIX}{name}" for name in BASELINES]
    assert predictions.columns == [*PREDICTION_COLUMNS, *carried, *baseline_columns]
    assert {"score", "chrom", "position", "strand", "splice_type"} <= set(carried)
    assert not {"sequence", "donor_scores", "acceptor_scores"} & set(predictions.columns)  # windows' inputs
    assert {"donor_scores", "acceptor_scores"} <= set(windows.columns)  # the tree baseline read them
    expected = windows.select("id", *carried).join(predictions.select("id"), on="id", how="semi")
    assert predictions.select("id", *carried).sort("id").equals(expected.sort("id"))
    # each baseline column ranks the test windows as the comparison reports
    report = json.loads((tmp_path / "metrics.json").read_text())["comparison"]["overall"]["predictors"]
    for name in BASELINES:
        assert roc_auc(predictions["label"], predictions[f"{BASELINE_SCORE_PREFIX}{name}"]) == pytest.approx(
            report[name]["roc_auc"]["estimate"]
        )


def test_auto_threshold_maximises_f1_on_the_validation_split(trained, tmp_path):
    paths = evaluate_into(trained, tmp_path, {"evaluate": {"threshold": "auto", "batch_size": 64}})
    metrics = json.loads(paths["metrics"].read_text())
    choice = metrics["threshold_choice"]
    model, saved = load_trained_model(str(trained["model"]["model"]), str(trained["model"]["model_config"]))
    val, val_probs = predict_split(model, saved, str(trained["windows"]), str(trained["manifest"]), "val", 64)
    assert (choice["mode"], choice["criterion"], choice["split"]) == ("auto", "f1", "val")
    assert choice["n"] == len(val) and choice["n_positive"] == int(val.labels.sum())
    assert metrics["threshold"] == choice["threshold"]
    # no other cut between the validation scores does better on the validation split
    f1_at_choice = binary_metrics(val.labels, val_probs, choice["threshold"])["f1"]
    assert f1_at_choice == pytest.approx(choice["criterion_value"])
    assert all(
        (binary_metrics(val.labels, val_probs, cut)["f1"] or 0) <= f1_at_choice + 1e-12
        for cut in np.unique(val_probs)
    )
    predictions = pl.read_parquet(paths["predictions"])
    assert (predictions["pred"] == (predictions["prob"] >= choice["threshold"]).cast(pl.Int8)).all()


def test_a_model_that_does_not_beat_a_baseline_is_said_so(trained, tmp_path, capsys):
    """The untrained model is noise; the fixture's base score separates the classes."""
    metrics = json.loads(evaluate_into(trained, tmp_path)["metrics"].read_text())
    log = capsys.readouterr().err
    overall = metrics["comparison"]["overall"]
    assert overall["predictors"]["base_score"]["roc_auc"]["estimate"] > 0.7
    base = overall["differences"]["base_score"]["roc_auc"]
    assert base["verdict"] == "worse" and base["high"] < 0
    assert "the model does NOT beat base_score on ROC-AUC" in log and "it is worse" in log
    for group in metrics["comparison"]["per_splice_type"].values():
        assert all(set(d) == {"roc_auc", "pr_auc"} for d in group["differences"].values())


def test_undefined_metrics_are_null_in_the_file(trained, tmp_path):
    # Threshold 1: an untrained model flags nothing, so precision and mcc have no denominator.
    paths = evaluate_into(trained, tmp_path, {"evaluate": {"threshold": 1.0}})
    metrics = json.loads(paths["metrics"].read_text())
    assert metrics["confusion"]["tp"] + metrics["confusion"]["fp"] == 0
    assert metrics["precision"] is None and metrics["mcc"] is None
    for entry in metrics["per_bucket"]:
        assert entry["precision"] is None and entry["mcc"] is None
        assert all(entry[key] is None or isinstance(entry[key], float) for key in NULLABLE_METRICS)


def test_settings_come_from_the_config_json_with_schema_defaults(trained, tmp_path):
    defaults = evaluate_into(trained, tmp_path / "defaults", {})
    metrics = json.loads(defaults["metrics"].read_text())
    section = section_defaults("evaluate")
    assert metrics["threshold_choice"]["mode"] == section["threshold"] == "auto"
    assert metrics["comparison"]["n_replicates"] == section["bootstrap_replicates"]
    assert metrics["comparison"]["seed"] == section["bootstrap_seed"]
    assert metrics["comparison"]["baselines"]["kmer"]["k"] == [1, section["kmer_max_k"]]
    changed = evaluate_into(trained, tmp_path / "changed", {"evaluate": {"threshold": 0.25}})
    predictions = pl.read_parquet(changed["predictions"])
    assert json.loads(changed["metrics"].read_text())["threshold"] == 0.25
    assert json.loads(changed["metrics"].read_text())["threshold_choice"]["mode"] == "fixed"
    assert (predictions["pred"] == (predictions["prob"] >= 0.25).cast(pl.Int8)).all()


def test_the_entry_point_has_no_setting_flags():
    args, cfg = STAGE.parse(
        [
            "--windows",
            "w",
            "--manifest",
            "m",
            "--model",
            "p",
            "--model-config",
            "c",
            "--experiment",
            "e",
            "--out-predictions",
            "o",
            "--out-metrics",
            "n",
        ]
    )
    assert not {"threshold", "batch_size", "split", "kmer_max_k", "bootstrap_replicates"} & set(vars(args))
    assert cfg.evaluate.threshold == section_defaults("evaluate")["threshold"]


@pytest.mark.parametrize(
    "config, line",
    [
        ({"evaluate": {"threshold": 2}}, "config: evaluate.threshold: 2 is greater than the maximum of 1"),
        ({"evaluate": {"batch_size": 0}}, "config: evaluate.batch_size: 0 is less than the minimum of 1"),
        (
            {"evaluate": {"threshold": "best"}},
            r"config: evaluate.threshold: 'best' does not match '^(auto|precision:(0?\\.[0-9]+|1(\\.0+)?))$'",
        ),
        ({"evaluate": {"kmer_max_k": 0}}, "config: evaluate.kmer_max_k: 0 is less than the minimum of 1"),
    ],
)
def test_a_bad_setting_is_one_line_and_exit_2(trained, tmp_path, capsys, config, line):
    argv = [
        "--windows",
        str(trained["windows"]),
        "--manifest",
        str(trained["manifest"]),
        "--model",
        str(trained["model"]["model"]),
        "--model-config",
        str(trained["model"]["model_config"]),
        "--experiment",
        "x",
        "--out-predictions",
        str(tmp_path / "p.parquet"),
        "--out-metrics",
        str(tmp_path / "m.json"),
        "--config",
        json.dumps(config),
    ]
    with pytest.raises(SystemExit) as exited:
        run_cli(main, argv)
    assert exited.value.code == 2
    assert capsys.readouterr().err == f"errorseq: error: {line}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == []
