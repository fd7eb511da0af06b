"""The evaluate rule's entry point: its files are the artifacts.py shapes, its settings come from
`--config` (schema defaults, no argparse defaults), a bad setting is one line."""

import json

import polars as pl
import pytest

from tests.evaluation_fixtures import make_windows, run_evaluate, write_buckets, write_untrained_model
from workflow_scripts.artifacts import (
    EVALUATED_SPLIT,
    METRICS_FILE_FIELDS,
    NULLABLE_METRICS,
    PER_BUCKET_FIELDS,
    PREDICTION_COLUMNS,
)
from workflow_scripts.config.sections import section_defaults
from workflow_scripts.errors import run_cli
from workflow_scripts.rules.evaluate import main, parse_args


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
    predictions = pl.read_parquet(paths["predictions"])
    assert predictions.columns == list(PREDICTION_COLUMNS)
    test_rows = pl.read_parquet(trained["manifest"]).filter(pl.col("split") == EVALUATED_SPLIT).height
    assert predictions.height == metrics["n"] == test_rows
    assert sum(entry["n"] for entry in metrics["per_bucket"]) == metrics["n"]


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
    assert (
        json.loads(defaults["metrics"].read_text())["threshold"] == section_defaults("evaluate")["threshold"]
    )
    changed = evaluate_into(trained, tmp_path / "changed", {"evaluate": {"threshold": 0.25}})
    predictions = pl.read_parquet(changed["predictions"])
    assert json.loads(changed["metrics"].read_text())["threshold"] == 0.25
    assert (predictions["pred"] == (predictions["prob"] >= 0.25).cast(pl.Int8)).all()


def test_the_entry_point_has_no_setting_flags():
    args = parse_args(
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
    assert not {"threshold", "batch_size", "split"} & set(vars(args))
    assert args.config == "{}"


@pytest.mark.parametrize(
    "config, line",
    [
        ({"evaluate": {"threshold": 2}}, "config: evaluate.threshold: 2 is greater than the maximum of 1"),
        ({"evaluate": {"batch_size": 0}}, "config: evaluate.batch_size: 0 is less than the minimum of 1"),
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
