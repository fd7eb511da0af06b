"""The files `plot` reads, made by the pipeline's own writers (no hand-written copies of them):
windows → bucket_windows (manifest, summary.json) → an untrained model → the evaluate rule
(predictions.parquet, metrics.json); steps.jsonl through telemetry's StepLog, which refuses any
record that is not the artifacts.py shape, on the trainer's logging schedule."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import torch
from threadpoolctl import threadpool_limits

from workflow_scripts.bucketing.assign import BucketSettings, bucket_windows
from workflow_scripts.config.types import complete_typed_section
from workflow_scripts.data.quality import read_notes
from workflow_scripts.io_utils import write_json, write_parquet
from workflow_scripts.models.builtin import build_model
from workflow_scripts.models.call_inputs import feature_width
from workflow_scripts.rules.evaluate import main as evaluate_main
from workflow_scripts.tokenization.tokenizers import NucleotideTokenizer
from workflow_scripts.training.telemetry import StepLog
from workflow_scripts.training.trained_on import trained_on

FLANK = 200
BOUNDARIES = [150, 2 * FLANK + 2, 1000, 3001]  # token lengths (CLS included)
MODEL = {"arch": "cnn", "d_model": 8, "n_layers": 1}


def make_windows(
    path: Path, n: int = 600, seed: int = 0, with_score: bool = True, fn_vs_decoy_tn: bool = False
) -> Path:
    """Windows like extract writes: most are unclipped (2 * FLANK + 1 nt, one spike of lengths),
    the rest clipped at gene ends (shorter) or from a wider source (longer); with the call columns
    of a calls table, and (with_score) a base-model score that is lower for errors (labels 1) and
    the base model's score profiles along each window (donor_scores, acceptor_scores: random, one
    value per base), as extract writes them when the pipeline made the calls. fn_vs_decoy_tn: the
    calls are FN and decoy TN (make_calls' tn_strategy), else FP and TP."""
    rng = np.random.default_rng(seed)
    lengths = np.where(rng.random(n) < 0.6, 2 * FLANK + 1, rng.integers(40, 3000, n))
    labels = rng.integers(0, 2, n)
    gene = np.arange(n) // 3
    splits = np.array(["train", "val", "test"])[rng.choice(3, gene.max() + 1, p=[0.6, 0.1, 0.3])][gene]
    write_parquet(
        pl.DataFrame(
            {
                "id": [f"w{i}" for i in range(n)],
                "gene_id": [f"g{g}" for g in gene],
                "split": splits,
                "label": labels.astype(np.int8),
                "sequence": ["".join(rng.choice(list("ACGT"), length)) for length in lengths],
                "length": lengths.astype(np.int32),
                "chrom": ["chr1"] * n,
                "position": (1000 * np.arange(1, n + 1)).astype(np.int64),
                "strand": np.where(np.arange(n) % 2 == 0, "+", "-"),
                "splice_type": np.where(np.arange(n) % 4 < 2, "donor", "acceptor"),
                "pred_type": np.where(labels == 1, *(("FN", "TN") if fn_vs_decoy_tn else ("FP", "TP"))),
                "score": np.clip(0.7 - 0.3 * labels + 0.2 * rng.normal(size=n), 0, 1),
            }
        )
        .with_columns(random_profiles(rng, lengths))
        .with_columns(tn_strategy=pl.when(pl.col("pred_type") == "TN").then(pl.lit("decoy")))
        .drop([] if with_score else ["score", *PROFILES]),
        path,
    )
    return path


PROFILES = ("donor_scores", "acceptor_scores")


def random_profiles(rng: np.random.Generator, lengths: np.ndarray) -> list[pl.Series]:
    return [
        pl.Series(name, [rng.random(length) * 0.1 for length in lengths.tolist()], dtype=pl.List(pl.Float32))
        for name in PROFILES
    ]


def write_buckets(windows: Path, directory: Path) -> dict[str, Path]:
    bucket = complete_typed_section("bucket", {"boundaries": BOUNDARIES, "max_length": BOUNDARIES[-1]})
    manifest, summary, _ = bucket_windows(
        str(windows), BucketSettings.from_config(bucket, NucleotideTokenizer(1))
    )
    paths = {"manifest": directory / "manifest.parquet", "bucket_summary": directory / "summary.json"}
    write_parquet(manifest, paths["manifest"])
    write_json(paths["bucket_summary"], summary)
    return paths


def write_untrained_model(
    directory: Path,
    max_tokens: int,
    input_columns: tuple = (),
    windows: Path | None = None,
    experiment: str = "toy_experiment",
) -> dict[str, Path]:
    """A randomly initialised model as train writes it, taking `input_columns` beside the sequence;
    model.json records the window and labels of `windows` (extract's notes), as train does."""
    torch.manual_seed(0)
    tokenizer = NucleotideTokenizer(1)
    n_features = feature_width(input_columns)
    model = build_model(MODEL, tokenizer.vocab_size, max_tokens, pretrained=False, n_features=n_features)
    paths = {"model": directory / "model.pt", "model_config": directory / "model.json"}
    torch.save(model.state_dict(), paths["model"])
    paths["model_config"].write_text(
        json.dumps(
            {
                "experiment": experiment,
                "model": MODEL,
                "max_tokens": max_tokens,
                **trained_on(read_notes(windows) if windows else {}, tokenizer, list(input_columns)),
            }
        )
    )
    return paths


def run_evaluate(
    windows: Path,
    manifest: Path,
    model: dict[str, Path],
    directory: Path,
    config: dict | None = None,
    experiment: str = "toy_experiment",
) -> dict[str, Path]:
    paths = {"predictions": directory / "predictions.parquet", "metrics": directory / "metrics.json"}
    with threadpool_limits(limits=1, user_api="openmp"):  # the evaluate job's OMP_NUM_THREADS (threads 1)
        run_evaluate_main(windows, manifest, model, paths, config, experiment)
    return paths


def run_evaluate_main(windows, manifest, model, paths, config, experiment) -> None:
    evaluate_main(
        [
            "--windows",
            str(windows),
            "--manifest",
            str(manifest),
            "--model",
            str(model["model"]),
            "--model-config",
            str(model["model_config"]),
            "--experiment",
            experiment,
            "--out-predictions",
            str(paths["predictions"]),
            "--out-metrics",
            str(paths["metrics"]),
            "--config",
            json.dumps(config or {"evaluate": {"batch_size": 64}}),
        ]
    )


def evaluate_untrained_models(
    tmp_path_factory: pytest.TempPathFactory, config: dict, runs: list[tuple[str, int, bool]], n: int
) -> list[Path]:
    """metrics.json of each run (experiment, seed, with_score), in that order: n make_windows of the
    run's seed in a folder of their own, their buckets and an untrained model, through evaluate.
    An experiment named fn_vs_tn gets FN and decoy TN calls."""
    paths = []
    for experiment, seed, with_score in runs:
        directory = tmp_path_factory.mktemp(experiment)
        windows = make_windows(
            directory / "windows.parquet", n, seed, with_score, fn_vs_decoy_tn=experiment == "fn_vs_tn"
        )
        buckets = write_buckets(windows, directory)
        model = write_untrained_model(directory, 3001)
        paths.append(
            run_evaluate(windows, buckets["manifest"], model, directory, config, experiment)["metrics"]
        )
    return paths


def train_record(epoch: int, step: int, gpu: bool) -> dict:
    memory = 800.0 + step if gpu else None
    return {
        "kind": "train",
        "epoch": epoch,
        "step": step,
        "loss": 0.7 / (1 + 0.05 * step),
        "lr": 1e-3 * min(1.0, step / 10),
        "tokens_per_s": 5000.0 + step,
        "windows_per_s": 50.0,
        "step_s": 0.5,
        "rss_mb": 900.0 + step,
        "gpu_allocated_mb": memory,
        "gpu_reserved_mb": memory,
        "gpu_peak_mb": memory,
    }


def validation_record(epoch: int, step: int) -> dict:
    return {
        "kind": "val",
        "epoch": epoch,
        "step": step,
        "val_loss": 0.6 - 0.05 * epoch,
        "val_accuracy": 0.7,
        "val_roc_auc": None if epoch == 1 else 0.8,
    }


def write_step_log(
    path: Path,
    epochs: int = 3,
    steps_per_epoch: int = 12,
    log_every: int = 5,
    gpu: bool = False,
    validation: bool = True,
) -> Path:
    """The trainer's schedule: a train record every `log_every` steps and after each epoch's last
    step (step counts run on across epochs); a val record after each epoch."""
    log = StepLog(path, enabled=True)
    step = 0
    for epoch in range(1, epochs + 1):
        for _ in range(steps_per_epoch):
            step += 1
            if step % log_every == 0 or step == epoch * steps_per_epoch:
                log.write(train_record(epoch, step, gpu))
        if validation:
            log.write(validation_record(epoch, step))
    return path


def make_plot_inputs(directory: Path) -> dict[str, Path]:
    """Every input of the plot rule, keyed like PlotInputPaths' fields."""
    windows = make_windows(directory / "windows.parquet")
    buckets = write_buckets(windows, directory)
    model = write_untrained_model(directory, BOUNDARIES[-1])
    evaluation = run_evaluate(windows, buckets["manifest"], model, directory)
    steps = write_step_log(directory / "steps.jsonl")
    return {
        "predictions": evaluation["predictions"],
        "metrics": evaluation["metrics"],
        "steps": steps,
        "bucket_summary": buckets["bucket_summary"],
        "manifest": buckets["manifest"],
    }
