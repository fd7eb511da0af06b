"""The plot rule: every PNG from files the pipeline's own writers made, one line for a file that
cannot be read, and what the figures show (epoch boundaries, per-bucket curves, log counts)."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from matplotlib import pyplot as plt

from tests.evaluation_fixtures import BOUNDARIES, make_plot_inputs, write_step_log
from tests.workflow_helpers import HANG_GUARD_S, subprocess_env
from workflow_scripts.artifacts import BASELINE_SCORE_PREFIX, PLOTS, plot_file_name
from workflow_scripts.comparison_fields import BASELINES, METRICS
from workflow_scripts.errors import InputError
from workflow_scripts.evaluation.plots import FIGURES, PlotInputPaths, read_inputs, write_plots
from workflow_scripts.evaluation.plots.buckets import length_bins, length_histogram_figure
from workflow_scripts.evaluation.plots.classification import (
    MIN_WINDOWS_PER_CLASS,
    bucket_curves,
    precision_recall_figure,
    roc_figure,
)
from workflow_scripts.evaluation.plots.comparison import model_vs_baselines_figure
from workflow_scripts.evaluation.plots.inputs import read_steps
from workflow_scripts.evaluation.plots.training import (
    epoch_boundaries,
    seconds_in_steps,
    training_curves_figure,
)
from workflow_scripts.metrics import binary_metrics

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
PNG_NAMES = sorted(plot_file_name(name) for name in PLOTS)


@pytest.fixture(scope="module")
def made_inputs(tmp_path_factory) -> dict[str, Path]:
    return make_plot_inputs(tmp_path_factory.mktemp("inputs"))


@pytest.fixture
def inputs(made_inputs, tmp_path) -> dict[str, Path]:
    """A private copy, so a test may spoil one file."""
    copies = {key: tmp_path / path.name for key, path in made_inputs.items()}
    for key, path in made_inputs.items():
        shutil.copy(path, copies[key])
    return copies


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def cli_args(paths: dict[str, Path], out_dir: Path) -> list[str]:
    return [
        "--predictions",
        str(paths["predictions"]),
        "--metrics",
        str(paths["metrics"]),
        "--steps",
        str(paths["steps"]),
        "--bucket-summary",
        str(paths["bucket_summary"]),
        "--manifest",
        str(paths["manifest"]),
        "--out-dir",
        str(out_dir),
    ]


def run_plot_rule(args: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "workflow_scripts.rules.plot", *args],
        capture_output=True,
        text=True,
        env=subprocess_env(),
        timeout=HANG_GUARD_S,
    )


def assert_valid_png(path: Path) -> None:
    data = path.read_bytes()
    assert data.startswith(PNG_MAGIC), path
    assert len(data) > 10_000, f"{path} is suspiciously small ({len(data)} bytes)"


def written_files(out_dir: Path) -> list[str]:
    return sorted(p.name for p in out_dir.iterdir()) if out_dir.exists() else []


def plot_paths(paths: dict[str, Path]) -> PlotInputPaths:
    return PlotInputPaths(**{key: str(path) for key, path in paths.items()})


def test_every_declared_plot_has_a_figure():
    assert list(FIGURES) == list(PLOTS)


def test_rule_writes_every_png_from_the_writers_files(inputs, tmp_path):
    out_dir = tmp_path / "plots"
    result = run_plot_rule(cli_args(inputs, out_dir))
    assert result.returncode == 0, result.stderr
    assert written_files(out_dir) == PNG_NAMES  # and no leftover temporary files
    for name in PNG_NAMES:
        assert_valid_png(out_dir / name)


def spoil_with(text: str):
    return lambda path: path.write_text(text)


def drop_column(column: str):
    return lambda path: pl.read_parquet(path).drop(column).write_parquet(path)


def drop_key(key: str):
    return lambda path: path.write_text(
        json.dumps({k: v for k, v in json.loads(path.read_text()).items() if k != key})
    )


@pytest.mark.parametrize(
    "key, spoil, field",
    [
        ("predictions", spoil_with("not parquet"), "file"),
        ("manifest", Path.unlink, "file"),
        ("metrics", spoil_with("{not json"), "file"),
        ("bucket_summary", spoil_with("[1, 2]"), "file"),
        ("steps", spoil_with('{"kind": "train", "step": 1\n'), "line 1"),
        ("steps", spoil_with('{"kind": "checkpoint"}\n'), "line 1"),
        ("predictions", drop_column("prob"), "prob"),
        ("metrics", drop_key("confusion"), "confusion"),
        ("bucket_summary", drop_key("padding_efficiency"), "padding_efficiency"),
    ],
)
def test_a_file_that_cannot_be_read_is_one_line_naming_it_and_no_png(inputs, tmp_path, key, spoil, field):
    spoil(inputs[key])
    out_dir = tmp_path / "plots"
    result = run_plot_rule(cli_args(inputs, out_dir))
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [result.stderr.strip()], result.stderr
    assert result.stderr.startswith(f"errorseq: error: {inputs[key]}: {field}: ")
    assert written_files(out_dir) == []


def test_a_step_log_line_missing_a_declared_field_names_line_and_field(inputs):
    records = inputs["steps"].read_text().splitlines()
    second = json.loads(records[1])
    del second["lr"]
    inputs["steps"].write_text("\n".join([records[0], json.dumps(second), *records[2:]]) + "\n")
    with pytest.raises(InputError) as caught:
        read_steps(inputs["steps"])
    assert (caught.value.source, caught.value.field) == (str(inputs["steps"]), "lr")
    assert caught.value.message.startswith("line 2: missing")


def test_steps_become_columns_with_nulls_as_nan(tmp_path):
    log = read_steps(write_step_log(tmp_path / "steps.jsonl", epochs=3, steps_per_epoch=12, log_every=5))
    assert log.train["step"].tolist() == [5, 10, 12, 15, 20, 24, 25, 30, 35, 36]
    assert log.train["epoch"].tolist() == [1, 1, 1, 2, 2, 2, 3, 3, 3, 3]
    assert log.val["step"].tolist() == [12, 24, 36]
    assert np.isnan(log.train["gpu_peak_mb"]).all()  # CPU run: null
    assert np.isnan(log.val["val_roc_auc"][0]) and log.val["val_roc_auc"][1] == 0.8


def vertical_lines(ax, label: str) -> list[float]:
    handles, labels = ax.get_legend_handles_labels()
    assert label in labels, labels
    color = handles[labels.index(label)].get_color()
    return [
        line.get_xdata()[0]
        for line in ax.get_lines()
        if line.get_linestyle() == ":" and line.get_color() == color
    ]


def test_epoch_lines_sit_on_the_epoch_boundaries_not_the_next_logged_step(tmp_path):
    log = read_steps(write_step_log(tmp_path / "steps.jsonl", epochs=3, steps_per_epoch=12, log_every=5))
    assert epoch_boundaries(log.train).tolist() == [12, 24]  # the first records of epochs 2, 3: 15, 25
    fig = training_curves_figure(log)
    assert vertical_lines(fig.axes[0], "epoch boundary") == [12, 24]


def test_epoch_boundaries_without_validation_records(tmp_path):
    log = read_steps(
        write_step_log(tmp_path / "steps.jsonl", epochs=2, steps_per_epoch=7, log_every=3, validation=False)
    )
    assert log.val["step"].size == 0
    assert epoch_boundaries(log.train).tolist() == [7]


def test_training_time_is_seconds_per_step_times_steps(tmp_path):
    log = read_steps(write_step_log(tmp_path / "steps.jsonl", epochs=2, steps_per_epoch=12, log_every=5))
    assert seconds_in_steps(log.train) == pytest.approx(24 * 0.5)


def test_training_curves_with_gpu_memory_draw_it(tmp_path):
    log = read_steps(write_step_log(tmp_path / "steps.jsonl", gpu=True))
    memory_ax = training_curves_figure(log).axes[3]
    assert memory_ax.get_legend_handles_labels()[1] == [
        "host RAM (RSS, rank 0)",
        "GPU allocated",
        "GPU peak allocated",
    ]


def test_a_one_epoch_run_with_one_record_shows_it_as_a_point(tmp_path):
    log = read_steps(write_step_log(tmp_path / "steps.jsonl", epochs=1, steps_per_epoch=10, log_every=50))
    assert log.train["step"].tolist() == [10]
    fig = training_curves_figure(log)
    loss_line = fig.axes[0].get_lines()[0]
    assert loss_line.get_marker() == "o"
    assert fig.axes[0].get_xlim()[0] == 0


def test_a_log_without_step_records_still_plots(tmp_path):
    path = tmp_path / "steps.jsonl"
    path.write_text("")  # max_steps below log_every_steps: the trainer wrote nothing
    figure = training_curves_figure(read_steps(path))
    texts = [text.get_text() for text in figure.axes[0].texts]
    assert any("no training step was logged" in text for text in texts)


def predictions_with_buckets(windows_per_class: dict[int, int], seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    labels, buckets = [], []
    for bucket, count in windows_per_class.items():
        labels += [0] * count + [1] * count
        buckets += [bucket] * 2 * count
    labels = np.array(labels)
    probs = np.clip(0.3 * labels + 0.7 * rng.random(labels.size), 0, 1)
    return pl.DataFrame({"label": labels, "prob": probs, "bucket": buckets})


def metrics_of(predictions: pl.DataFrame) -> dict:
    return {"experiment": "x", **binary_metrics(predictions["label"], predictions["prob"])}


def bucket_summary_for(buckets) -> dict:
    return {"buckets": [{"bucket": b, "lower": 100 * b + 1, "upper": 100 * (b + 1)} for b in buckets]}


def test_buckets_with_few_windows_of_a_class_get_no_curve_of_their_own():
    predictions = predictions_with_buckets(
        {0: 60, 1: MIN_WINDOWS_PER_CLASS - 1, 2: MIN_WINDOWS_PER_CLASS, 3: 7}
    )
    curves, left_out = bucket_curves(predictions)
    assert [curve.bucket for curve in curves] == [0, 2]
    assert left_out == 2
    summary = bucket_summary_for(range(4))
    for figure in (roc_figure, precision_recall_figure):
        labels = figure(predictions, metrics_of(predictions), summary).axes[0].get_legend_handles_labels()[1]
        drawn = [label for label in labels if label.startswith("length bucket")]
        assert [label.split(" (")[0] for label in drawn] == ["length bucket 0", "length bucket 2"]
        assert (
            f"2 length buckets with < {MIN_WINDOWS_PER_CLASS} windows of a class: no curve of their own"
            in labels
        )


def test_one_bucket_has_only_the_overall_curve():
    predictions = predictions_with_buckets({0: 100})
    assert bucket_curves(predictions) == ([], 0)


def test_single_class_predictions_still_plot():
    predictions = predictions_with_buckets({0: 30, 1: 30}).with_columns(pl.lit(0).alias("label"))
    metrics = metrics_of(predictions)
    assert metrics["roc_auc"] is None and metrics["recall"] is None  # no errors to recall
    for figure in (roc_figure, precision_recall_figure):
        texts = [
            text.get_text() for text in figure(predictions, metrics, bucket_summary_for([0, 1])).axes[0].texts
        ]
        assert any("only one class present" in text for text in texts)


def test_length_histogram_counts_on_a_log_axis_so_one_spike_does_not_flatten_the_rest(made_inputs):
    inputs = read_inputs(plot_paths(made_inputs))
    ax = length_histogram_figure(inputs.manifest, inputs.bucket_summary).axes[0]
    assert ax.get_yscale() == "log"
    bottom, top = ax.get_ylim()
    assert bottom < 1  # a bin holding one window still shows
    spike = int((inputs.manifest["token_length"] == 402).sum())
    assert spike > 300 and top > spike  # the unclipped windows: one bin
    assert ax.get_xscale() == "log"  # lengths span 40-3000 tokens


def test_length_histogram_with_a_narrow_length_range_uses_a_linear_length_axis(made_inputs):
    inputs = read_inputs(plot_paths(made_inputs))
    lengths = np.arange(inputs.manifest.height) % 2 + 300
    manifest = inputs.manifest.with_columns(pl.Series("token_length", lengths))
    bins, log_lengths = length_bins(manifest["token_length"].to_numpy(), BOUNDARIES[:2])
    assert not log_lengths and bins[0] == 0
    ax = length_histogram_figure(manifest, inputs.bucket_summary).axes[0]
    assert ax.get_xscale() == "linear" and ax.get_yscale() == "log"


def test_windows_of_one_length_get_a_sentence_not_a_histogram(made_inputs):
    """One bar read '100.0% vs 100.0%' once window.flank fixed every window's length."""
    inputs = read_inputs(plot_paths(made_inputs))
    manifest = inputs.manifest.with_columns(pl.lit(101).alias("token_length"))
    texts = [t.get_text() for t in length_histogram_figure(manifest, inputs.bucket_summary).axes[0].texts]
    assert texts == [
        f"All {manifest.height:,} windows are 101 tokens long (window.flank fixes the length):\n"
        "one length bucket, no padding, and length cannot tell the classes apart."
    ]


def test_write_plots_returns_the_declared_files(made_inputs, tmp_path):
    written = write_plots(plot_paths(made_inputs), tmp_path)
    assert [path.name for path in written] == [plot_file_name(name) for name in PLOTS]


def test_roc_and_pr_figures_draw_every_scored_baseline_but_chance(made_inputs):
    inputs = read_inputs(plot_paths(made_inputs))
    baseline_columns = [c for c in inputs.predictions.columns if c.startswith(BASELINE_SCORE_PREFIX)]
    assert len(baseline_columns) == len(BASELINES)  # the fixture's windows carry a score: all scored
    for figure in (roc_figure, precision_recall_figure):
        labels = (
            figure(inputs.predictions, inputs.metrics, inputs.bucket_summary)
            .axes[0]
            .get_legend_handles_labels()[1]
        )
        drawn = [label for label in labels if label.startswith("baseline: ")]
        assert len(drawn) == len(BASELINES) - 1 and not any("chance" in label for label in drawn)
        assert any("leak detector" in label for label in drawn)
    base = next(
        label
        for label in roc_figure(inputs.predictions, inputs.metrics, inputs.bucket_summary)
        .axes[0]
        .get_legend_handles_labels()[1]
        if "base model's score" in label
    )
    expected = inputs.metrics["comparison"]["overall"]["predictors"]["base_score"]["roc_auc"]["estimate"]
    assert base.endswith(f"AUC = {expected:.3f}")


def test_model_vs_baselines_figure_shows_each_group_and_the_verdicts(made_inputs):
    metrics = read_inputs(plot_paths(made_inputs)).metrics
    report = metrics["comparison"]
    fig = model_vs_baselines_figure(metrics)
    groups = 1 + len(report["per_splice_type"])
    assert len(fig.axes) == groups * 2 * len(METRICS)
    value_ax, difference_ax = fig.axes[0], fig.axes[1]
    assert [t.get_text() for t in value_ax.get_yticklabels()][0] == "error model"
    assert sum("leak detector" in t.get_text() for t in value_ax.get_yticklabels()) == 2
    verdicts = [text.get_text() for text in difference_ax.texts]
    expected = [
        report["overall"]["differences"][name]["roc_auc"]["verdict"]
        for name in report["overall"]["differences"]
    ]
    assert verdicts == expected and "worse" in verdicts  # the untrained model against the base score
    assert "acceptor sites" in fig.axes[2 * len(METRICS)].get_title()


def test_model_vs_baselines_without_splice_types_has_one_row(made_inputs):
    metrics = read_inputs(plot_paths(made_inputs)).metrics
    metrics["comparison"]["per_splice_type"] = {}
    assert len(model_vs_baselines_figure(metrics).axes) == 2 * len(METRICS)
