"""Predict the test split with a trained model and write metrics (overall and per bucket)."""

from __future__ import annotations

import json
import pickle
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl
import torch

from workflow_scripts.artifacts import EVALUATED_SPLIT, METRICS_FILE_FIELDS, PREDICTION_COLUMNS
from workflow_scripts.errors import InputError
from workflow_scripts.evaluation.metrics import binary_metrics, grouped_metrics
from workflow_scripts.io_utils import write_json, write_parquet
from workflow_scripts.models.builtin import build_model
from workflow_scripts.tokenization.tokenizers import load_tokenizer
from workflow_scripts.training.batches import BatchCollator, SplitData, load_split, sorted_batches
from workflow_scripts.training.distributed import avoid_per_shape_kernels


@dataclass(frozen=True)
class EvaluateConfig:
    """The completed `evaluate:` section (defaults come from the schema, not from here)."""

    threshold: float
    batch_size: int


@dataclass(frozen=True)
class EvaluatePaths:
    windows: str
    manifest: str
    model: str
    model_config: str
    out_predictions: str
    out_metrics: str


def load_trained_model(model_path: str, config_path: str) -> tuple[torch.nn.Module, dict]:
    """Rebuild the model from model.json and load its weights (weights_only: no pickle)."""
    for path in (model_path, config_path):
        if not Path(path).exists():
            raise InputError(path, "model", "file does not exist (has train finished?)")
    saved = json.loads(Path(config_path).read_text())
    tokenizer = load_tokenizer(saved["tokenizer"])
    # pretrained=False: a Hugging Face backbone is rebuilt from its config, weights come from model.pt
    model = build_model(saved["model"], tokenizer.vocab_size, saved["max_tokens"], pretrained=False)
    model.load_state_dict(load_state_dict(model_path))
    return model.eval(), saved


def load_state_dict(path: str) -> dict:
    """Tensors only: a file that needs arbitrary unpickling is refused, never executed."""
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as error:
        found = [line.strip() for line in str(error).splitlines() if "unsupported global" in line.lower()]
        raise InputError(
            path,
            "model",
            "refused: it holds Python objects, not just tensors "
            f"(loaded with weights_only; {found[0] if found else 'not a plain state dict'})",
        ) from None
    except (RuntimeError, EOFError, OSError) as error:
        reason = str(error).strip().split(". ")[0]
        raise InputError(path, "model", f"not a readable PyTorch file ({reason})") from None


@torch.no_grad()
def predict(
    model: torch.nn.Module, data: SplitData, collator: BatchCollator, batch_size: int, device: torch.device
) -> np.ndarray:
    """P(error) for every row of `data`, in its order."""
    probs = np.zeros(len(data), dtype=np.float64)
    model.to(device)
    for indices in sorted_batches(data, batch_size):
        batch = collator(indices)
        logits = model(batch["ids"].to(device), batch["mask"].to(device)).float()
        probs[indices] = torch.softmax(logits, -1)[:, 1].cpu().numpy()
    return probs


def predictions_frame(data: SplitData, probs: np.ndarray, threshold: float) -> pl.DataFrame:
    """predictions.parquet: artifacts.PREDICTION_COLUMNS, one row per window."""
    columns = {
        "id": data.ids,
        "gene_id": data.gene_ids,
        "label": data.labels,
        "prob": probs,
        "pred": (probs >= threshold).astype(np.int8),
        "bucket": data.buckets,
        "length": data.lengths,
    }
    return pl.DataFrame({name: columns[name] for name in PREDICTION_COLUMNS})


def metrics_document(
    experiment: str, labels: np.ndarray, probs: np.ndarray, buckets: np.ndarray, threshold: float
) -> dict:
    """metrics.json: artifacts.METRICS_FILE_FIELDS; per_bucket entries are PER_BUCKET_FIELDS."""
    per_bucket = [
        {"bucket": int(row.pop("group")), **row} for row in grouped_metrics(labels, probs, buckets, threshold)
    ]
    document = {
        "experiment": experiment,
        "split": EVALUATED_SPLIT,
        **binary_metrics(labels, probs, threshold),
        "per_bucket": per_bucket,
    }
    return {name: document[name] for name in METRICS_FILE_FIELDS}


def evaluation_device() -> torch.device:
    if not torch.cuda.is_available():
        return torch.device("cpu")
    avoid_per_shape_kernels()
    return torch.device("cuda")


def format_number(value: float | None) -> str:
    return "undefined" if value is None else f"{value:.4f}"


def evaluate(paths: EvaluatePaths, cfg: EvaluateConfig, experiment: str) -> dict:
    """Predict the test split, write predictions.parquet and metrics.json; return the metrics."""
    model, saved = load_trained_model(paths.model, paths.model_config)
    data = load_split(paths.windows, paths.manifest, EVALUATED_SPLIT)
    if len(data) == 0:
        raise InputError(paths.manifest, "split", f"no rows in the {EVALUATED_SPLIT} split")
    collator = BatchCollator(data, load_tokenizer(saved["tokenizer"]), saved["max_tokens"])
    probs = predict(model, data, collator, cfg.batch_size, evaluation_device())
    metrics = metrics_document(experiment, data.labels, probs, data.buckets, cfg.threshold)
    write_parquet(predictions_frame(data, probs, cfg.threshold), paths.out_predictions)
    write_json(paths.out_metrics, metrics)
    print(
        f"{experiment}: n={metrics['n']} accuracy={format_number(metrics['accuracy'])} "
        f"roc_auc={format_number(metrics['roc_auc'])} pr_auc={format_number(metrics['pr_auc'])} "
        f"mcc={format_number(metrics['mcc'])}",
        file=sys.stderr,
    )
    return metrics
