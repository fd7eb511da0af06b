import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from workflow_scripts.evaluation import plots as plot
from workflow_scripts.evaluation.metrics import binary_metrics, grouped_metrics
from workflow_scripts.errors import InputError

REPO_ROOT = Path(__file__).resolve().parents[1]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
PNG_NAMES = sorted(plot.OUTPUT_NAMES.values())
BOUNDARIES = [64, 128, 256, 512]


def make_predictions(n: int = 400, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 2, n)
    probs = np.clip(0.3 * labels + rng.random(n) * 0.7, 0, 1)
    lengths = rng.integers(40, 2000, n)
    return pl.DataFrame({
        "id": [f"win{i}" for i in range(n)],
        "gene_id": [f"gene{i % 17}" for i in range(n)],
        "label": labels,
        "prob": probs,
        "pred": (probs >= 0.5).astype(int),
        "bucket": np.searchsorted(BOUNDARIES, lengths // 4),
        "length": lengths,
    })


def make_metrics(predictions: pl.DataFrame) -> dict:
    labels, probs = predictions["label"].to_numpy(), predictions["prob"].to_numpy()
    per_bucket = grouped_metrics(labels, probs, predictions["bucket"].to_numpy(), threshold=0.5)
    return {
        **binary_metrics(labels, probs, threshold=0.5),
        "per_bucket": [{"bucket": entry.pop("group"), **entry} for entry in per_bucket],
        "experiment": "toy_experiment",
    }


def train_record(step: int, epoch: int, gpu: bool) -> dict:
    gpu_mb = 800.0 + step if gpu else None
    return {
        "kind": "train", "epoch": epoch, "step": step, "loss": 0.7 / (1 + 0.01 * step),
        "lr": 1e-3 * min(1.0, step / 10), "tokens_per_s": 5000.0 + step, "rss_mb": 900.0 + step,
        "gpu_allocated_mb": gpu_mb, "gpu_reserved_mb": gpu_mb, "gpu_peak_mb": gpu_mb,
        "elapsed_s": 0.5 * step, "extra_key": "ignored",
    }


def steps_lines(gpu: bool) -> list[str]:
    records = []
    for epoch in range(3):
        records += [train_record(epoch * 20 + i, epoch, gpu) for i in range(1, 21)]
        records.append({"kind": "val", "epoch": epoch, "step": epoch * 20 + 20, "val_loss": 0.6 - 0.05 * epoch,
                        "val_accuracy": 0.7, "val_roc_auc": None if epoch == 0 else 0.8})
    records.append({"kind": "checkpoint", "path": "model.pt"})
    return [json.dumps(record) for record in records]


def make_bucket_summary() -> dict:
    lowers = [0] + BOUNDARIES[:-1]
    return {
        "boundaries": BOUNDARIES,
        "buckets": [{"bucket": i, "lower": lo, "upper": hi, "count": 100 + i, "batch_size": 64 // (i + 1)}
                    for i, (lo, hi) in enumerate(zip(lowers, BOUNDARIES))],
        "padding_efficiency": {"plan": 0.91, "pad_to_max": 0.42, "single_bucket_sorted": 0.95},
    }


def make_manifest(n: int = 500, seed: int = 1) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    token_lengths = rng.integers(20, 512, n)
    return pl.DataFrame({
        "id": [f"win{i}" for i in range(n)],
        "split": rng.choice(["train", "val", "test"], n).tolist(),
        "label": rng.integers(0, 2, n),
        "length": token_lengths * 4,
        "token_length": token_lengths,
        "bucket": np.searchsorted(BOUNDARIES, token_lengths),
    })


@pytest.fixture
def inputs(tmp_path) -> dict[str, Path]:
    predictions = make_predictions()
    paths = {
        "predictions": tmp_path / "predictions.parquet",
        "metrics": tmp_path / "metrics.json",
        "steps": tmp_path / "steps.jsonl",
        "bucket_summary": tmp_path / "bucket_summary.json",
        "manifest": tmp_path / "manifest.parquet",
    }
    predictions.write_parquet(paths["predictions"])
    paths["metrics"].write_text(json.dumps(make_metrics(predictions)))
    paths["steps"].write_text("\n".join(steps_lines(gpu=True)) + "\n")
    paths["bucket_summary"].write_text(json.dumps(make_bucket_summary()))
    make_manifest().write_parquet(paths["manifest"])
    return paths


def cli_args(paths: dict[str, Path], out_dir: Path) -> list[str]:
    return [
        "--predictions", str(paths["predictions"]), "--metrics", str(paths["metrics"]),
        "--steps", str(paths["steps"]), "--bucket-summary", str(paths["bucket_summary"]),
        "--manifest", str(paths["manifest"]), "--out-dir", str(out_dir),
    ]


def run_plot_cli(args: list[str]) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    return subprocess.run([sys.executable, "-m", "workflow_scripts.evaluation.plots", *args],
                          capture_output=True, text=True, cwd=REPO_ROOT, env=env, timeout=60)


def assert_valid_png(path: Path) -> None:
    assert path.is_file(), path
    data = path.read_bytes()
    assert data.startswith(PNG_MAGIC), path
    assert len(data) > 10_000, f"{path} is suspiciously small ({len(data)} bytes)"


def written_files(out_dir: Path) -> list[str]:
    return sorted(p.name for p in out_dir.iterdir()) if out_dir.exists() else []


def test_cli_writes_every_png(inputs, tmp_path):
    out_dir = tmp_path / "plots"
    result = run_plot_cli(cli_args(inputs, out_dir))
    assert result.returncode == 0, result.stderr
    assert written_files(out_dir) == PNG_NAMES  # no leftover temp files
    for name in PNG_NAMES:
        assert_valid_png(out_dir / name)


def test_cli_missing_column_exits_2_with_one_line_and_no_pngs(inputs, tmp_path):
    pl.read_parquet(inputs["predictions"]).drop("prob").write_parquet(inputs["predictions"])
    out_dir = tmp_path / "plots"
    result = run_plot_cli(cli_args(inputs, out_dir))
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "predictions.parquet" in lines[0] and "prob" in lines[0]
    assert written_files(out_dir) == []


def test_training_curves_without_gpu_memory(inputs, tmp_path):
    inputs["steps"].write_text("\n".join(steps_lines(gpu=False)) + "\n")
    plot.plot_training_curves(plot.load_steps(inputs["steps"]), tmp_path / "training_curves.png")
    assert_valid_png(tmp_path / "training_curves.png")


def test_each_plot_function_directly(inputs, tmp_path):
    predictions = plot.load_predictions(inputs["predictions"])
    metrics = plot.load_metrics(inputs["metrics"])
    summary = plot.load_bucket_summary(inputs["bucket_summary"])
    plot.plot_roc(predictions, metrics, tmp_path / "roc.png")
    plot.plot_precision_recall(predictions, metrics, tmp_path / "pr.png", summary)
    plot.plot_confusion_matrix(metrics, tmp_path / "cm.png")
    plot.plot_training_curves(plot.load_steps(inputs["steps"]), tmp_path / "train.png")
    plot.plot_length_histogram(plot.load_manifest(inputs["manifest"]), summary, tmp_path / "hist.png")
    for name in ("roc.png", "pr.png", "cm.png", "train.png", "hist.png"):
        assert_valid_png(tmp_path / name)


def test_single_class_predictions_still_plot(inputs, tmp_path):
    predictions = make_predictions().with_columns(pl.lit(0).alias("label"))
    metrics = make_metrics(predictions)
    plot.plot_roc(predictions, metrics, tmp_path / "roc.png")
    plot.plot_precision_recall(predictions, metrics, tmp_path / "pr.png")
    assert_valid_png(tmp_path / "roc.png")
    assert_valid_png(tmp_path / "pr.png")


def test_steps_loader_ignores_unknown_kinds_and_keeps_nulls(inputs):
    inputs["steps"].write_text("\n".join(steps_lines(gpu=False)) + "\n\n")
    log = plot.load_steps(inputs["steps"])
    assert log.train["step"].size == 60
    assert log.val["step"].size == 3
    assert np.isnan(log.train["gpu_peak_mb"]).all()
    assert np.isnan(log.val["val_roc_auc"][0])


def write_bad_parquet(paths, key, frame):
    frame.write_parquet(paths[key])
    return paths[key]


@pytest.mark.parametrize("key, change, field", [
    ("predictions", lambda frame: frame.head(0), "rows"),
    ("predictions", lambda frame: frame.drop("label"), "label"),
    ("predictions", lambda frame: frame.with_columns(pl.lit(2).alias("label")), "label"),
    ("predictions", lambda frame: frame.with_columns(pl.lit(1.5).alias("prob")), "prob"),
    ("predictions", lambda frame: frame.with_columns(pl.lit(None, pl.Int64).alias("bucket")), "bucket"),
    ("manifest", lambda frame: frame.drop("token_length"), "token_length"),
])
def test_bad_tables_raise_input_error_naming_file_and_field(inputs, tmp_path, key, change, field):
    write_bad_parquet(inputs, key, change(pl.read_parquet(inputs[key])))
    with pytest.raises(InputError) as caught:
        plot.make_all_plots(*inputs.values(), tmp_path / "plots")
    assert caught.value.source == str(inputs[key])
    assert caught.value.field == field
    assert written_files(tmp_path / "plots") == []


@pytest.mark.parametrize("key, content, field", [
    ("metrics", '{"threshold": 0.5}', "confusion"),
    ("metrics", '{"threshold": "high", "confusion": {}}', "threshold"),
    ("metrics", "{not json", "file"),
    ("bucket_summary", '{"boundaries": [], "buckets": [], "padding_efficiency": {}}', "boundaries"),
    ("bucket_summary", json.dumps({**make_bucket_summary(), "padding_efficiency": {"plan": 0.9}}),
     "padding_efficiency.pad_to_max"),
    ("steps", '{"kind": "val", "epoch": 0, "step": 1, "val_loss": 0.5}\n', "kind"),
    ("steps", '{"kind": "train", "epoch": 0, "step": 1, "lr": 0.1}\n', "loss"),
    ("predictions", "not parquet", "file"),
])
def test_bad_documents_raise_input_error(inputs, tmp_path, key, content, field):
    inputs[key].write_text(content)
    with pytest.raises(InputError) as caught:
        plot.make_all_plots(*inputs.values(), tmp_path / "plots")
    assert caught.value.source == str(inputs[key])
    assert caught.value.field == field
    assert written_files(tmp_path / "plots") == []


def test_missing_file_names_the_file(inputs, tmp_path):
    inputs["manifest"].unlink()
    with pytest.raises(InputError) as caught:
        plot.make_all_plots(*inputs.values(), tmp_path / "plots")
    assert caught.value.source == str(inputs["manifest"])
    assert caught.value.field == "file"


def test_length_histogram_with_narrow_length_range_uses_linear_axis(tmp_path):
    manifest = make_manifest().with_columns(pl.col("token_length") + 200)
    bins, log_axis = plot._length_bins(manifest["token_length"].to_numpy(), BOUNDARIES)
    assert not log_axis and bins[0] == 0
    plot.plot_length_histogram(manifest, make_bucket_summary(), tmp_path / "length_histogram.png")
    assert_valid_png(tmp_path / "length_histogram.png")
