"""Evaluate a trained model on the test genes: metrics, the decision threshold and the baselines.

In order:
1. Threshold. With `evaluate.threshold: auto` the model also predicts the VALIDATION split (the
   same model and batching as the test split: `predict_split(..., "val", ...)`), and the
   threshold is the one maximising F1 there (threshold.py); a number is used as it is. The test
   split never takes part in the choice.
2. The test split's predictions; accuracy ... pr_auc at that threshold, overall and per bucket.
3. The model against its baselines on the same test genes (comparison.py: the base model's
   score, a k-mer logistic regression, chance and the leak detectors, fitted on train, with
   gene-level bootstrap intervals, paired differences and a verdict each, overall and per splice
   type), and a plain sentence in the log for every baseline the model does not beat.
4. predictions.parquet (artifacts.PREDICTION_COLUMNS, the windows' call columns, each baseline's
   score) and metrics.json (artifacts.METRICS_FILE_FIELDS).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import polars as pl

from workflow_scripts.artifacts import (
    BASELINE_SCORE_PREFIX,
    EVALUATED_SPLIT,
    METRICS_FILE_FIELDS,
    PREDICTION_COLUMNS,
    PREDICTION_DROPPED_WINDOW_COLUMNS,
)
from workflow_scripts.config.types import EvaluateSection
from workflow_scripts.errors import InputError
from workflow_scripts.evaluation.comparison import Comparison, compare_and_score
from workflow_scripts.evaluation.comparison_text import comparison_sentences
from workflow_scripts.evaluation.predict import load_trained_model, predict_split
from workflow_scripts.evaluation.threshold import CHOICE_SPLIT, choose_threshold, is_auto
from workflow_scripts.io_utils import write_json, write_parquet
from workflow_scripts.metrics import binary_metrics, grouped_metrics
from workflow_scripts.training.batches import SplitData

__all__ = ["EvaluatePaths", "evaluate", "load_trained_model"]


@dataclass(frozen=True)
class EvaluatePaths:
    windows: str
    manifest: str
    model: str
    model_config: str
    out_predictions: str
    out_metrics: str


def predictions_frame(
    data: SplitData,
    probs: np.ndarray,
    threshold: float,
    windows: pl.DataFrame,
    baseline_scores: Mapping[str, np.ndarray],
) -> pl.DataFrame:
    """predictions.parquet: PREDICTION_COLUMNS, then the windows' other columns (not the sequence),
    then BASELINE_SCORE_PREFIX + name for every scored baseline; one row per window, data's order."""
    columns = {
        "id": data.ids,
        "gene_id": data.gene_ids,
        "label": data.labels,
        "prob": probs,
        "pred": (probs >= threshold).astype(np.int8),
        "bucket": data.buckets,
        "length": data.lengths,
    }
    frame = pl.DataFrame({name: columns[name] for name in PREDICTION_COLUMNS})
    carried = [
        c for c in windows.columns if c not in (*PREDICTION_COLUMNS, *PREDICTION_DROPPED_WINDOW_COLUMNS)
    ]
    frame = frame.join(windows.select("id", *carried), on="id", how="left", maintain_order="left")
    return frame.with_columns(
        pl.Series(f"{BASELINE_SCORE_PREFIX}{name}", np.asarray(scores, dtype=float))
        for name, scores in baseline_scores.items()
    )


def metrics_document(
    experiment: str, data: SplitData, probs: np.ndarray, threshold_choice: dict, comparison: Comparison
) -> dict:
    """metrics.json: artifacts.METRICS_FILE_FIELDS; per_bucket entries are PER_BUCKET_FIELDS."""
    threshold = threshold_choice["threshold"]
    per_bucket = [
        {"bucket": int(row.pop("group")), **row}
        for row in grouped_metrics(data.labels, probs, data.buckets, threshold)
    ]
    document = {
        "experiment": experiment,
        "split": EVALUATED_SPLIT,
        **binary_metrics(data.labels, probs, threshold),
        "per_bucket": per_bucket,
        "threshold_choice": threshold_choice,
        "comparison": comparison.report,
    }
    return {name: document[name] for name in METRICS_FILE_FIELDS}


def format_number(value: float | None) -> str:
    return "undefined" if value is None else f"{value:.4f}"


def threshold_line(choice: dict) -> str:
    if choice["mode"] == "fixed":
        return f"threshold {choice['threshold']:g} (evaluate.threshold)"
    if choice["reason"]:
        line = f"threshold {choice['threshold']:g}: {choice['reason']}"
    else:
        goal = "maximises f1" if choice["mode"] == "auto" else f"reaches {choice['mode'].replace(':', ' ')}"
        line = (
            f"threshold {choice['threshold']:.4f}: {goal} on the {choice['split']} "
            f"split ({choice['criterion']} {choice['criterion_value']:.4f} on {choice['n']} windows, "
            f"{choice['n_positive']} errors)"
        )
    return line + (f"; warning: {choice['warning']}" if choice.get("warning") else "")


def log(lines: list[str]) -> None:
    for line in lines:
        print(line, file=sys.stderr)


def evaluate(paths: EvaluatePaths, cfg: EvaluateSection, seed: int, experiment: str) -> dict:
    """Write predictions.parquet and metrics.json for the test split; return the metrics. `cfg`:
    the typed `evaluate:` section; `seed`: the run's train.seed (the fitted baselines' random state)."""
    model, saved = load_trained_model(paths.model, paths.model_config)

    def predict(split: str) -> tuple[SplitData, np.ndarray]:
        return predict_split(model, saved, paths.windows, paths.manifest, split, cfg.batch_size)

    if is_auto(cfg.threshold):
        val, val_probs = predict(CHOICE_SPLIT)
        choice = choose_threshold(cfg.threshold, val.labels, val_probs)
    else:
        choice = choose_threshold(cfg.threshold)
    data, probs = predict(EVALUATED_SPLIT)
    if len(data) == 0:
        raise InputError(paths.manifest, "split", f"no rows in the {EVALUATED_SPLIT} split")
    windows = pl.read_parquet(paths.windows)
    comparison = compare_and_score(windows, pl.DataFrame({"id": data.ids, "prob": probs}), cfg, seed)
    metrics = metrics_document(experiment, data, probs, choice, comparison)
    write_parquet(
        predictions_frame(data, probs, choice["threshold"], windows, comparison.baseline_scores),
        paths.out_predictions,
    )
    write_json(paths.out_metrics, metrics)
    log(
        [
            f"{experiment}: {threshold_line(choice)}",
            f"{experiment}: n={metrics['n']} accuracy={format_number(metrics['accuracy'])} "
            f"roc_auc={format_number(metrics['roc_auc'])} pr_auc={format_number(metrics['pr_auc'])} "
            f"f1={format_number(metrics['f1'])} mcc={format_number(metrics['mcc'])}",
            *comparison_sentences(comparison.report),
        ]
    )
    return metrics
