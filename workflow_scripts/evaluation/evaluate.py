"""Predict the test split with a trained model and write metrics (overall and per bucket)."""

from __future__ import annotations

import argparse
import json
import pickle
import sys
from pathlib import Path

import numpy as np
import polars as pl
import torch

from workflow_scripts.evaluation.metrics import binary_metrics, grouped_metrics
from workflow_scripts.training.batches import BatchCollator, SplitData, load_split, sorted_batches
from workflow_scripts.training.distributed import avoid_per_shape_kernels
from workflow_scripts.errors import InputError, run_cli
from workflow_scripts.io_utils import write_json, write_parquet
from workflow_scripts.models.builtin import build_model
from workflow_scripts.tokenization.tokenizers import load_tokenizer


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--windows", required=True)
    parser.add_argument("--manifest", required=True)
    parser.add_argument("--model", required=True, help="plain state dict written by train")
    parser.add_argument("--model-config", required=True, help="model.json written by train")
    parser.add_argument("--threshold", type=float, default=0.5)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--split", default="test")
    parser.add_argument("--experiment", default="experiment")
    parser.add_argument("--out-predictions", required=True)
    parser.add_argument("--out-metrics", required=True)
    return parser.parse_args(argv)


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
        raise InputError(path, "model", "refused: it holds Python objects, not just tensors "
                         f"(loaded with weights_only; {found[0] if found else 'not a plain state dict'})") from None
    except (RuntimeError, EOFError, OSError) as error:
        reason = str(error).strip().split(". ")[0]
        raise InputError(path, "model", f"not a readable PyTorch file ({reason})") from None


@torch.no_grad()
def predict(model: torch.nn.Module, data: SplitData, collator: BatchCollator,
            batch_size: int, device: torch.device) -> np.ndarray:
    """P(error) for every row of `data`, in its order."""
    probs = np.zeros(len(data), dtype=np.float64)
    model.to(device)
    for indices in sorted_batches(data, batch_size):
        batch = collator(indices)
        logits = model(batch["ids"].to(device), batch["mask"].to(device)).float()
        probs[indices] = torch.softmax(logits, -1)[:, 1].cpu().numpy()
    return probs


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if not 0.0 <= args.threshold <= 1.0:
        raise InputError("config", "evaluate.threshold", f"must be in [0, 1] (got {args.threshold})")
    model, saved = load_trained_model(args.model, args.model_config)
    data = load_split(args.windows, args.manifest, args.split)
    if len(data) == 0:
        raise InputError(args.manifest, "split", f"no rows in the {args.split} split")
    tokenizer = load_tokenizer(saved["tokenizer"])
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device.type == "cuda":
        avoid_per_shape_kernels()
    probs = predict(model, data, BatchCollator(data, tokenizer, saved["max_tokens"]), args.batch_size, device)
    preds = (probs >= args.threshold).astype(np.int8)
    write_parquet(pl.DataFrame({
        "id": data.ids, "gene_id": data.gene_ids, "label": data.labels, "prob": probs,
        "pred": preds, "bucket": data.buckets, "length": data.lengths,
    }), args.out_predictions)
    metrics = {"experiment": args.experiment, "split": args.split,
               **binary_metrics(data.labels, probs, args.threshold),
               "per_bucket": rename_group(grouped_metrics(data.labels, probs, data.buckets, args.threshold))}
    write_json(args.out_metrics, metrics)
    print(f"{args.experiment}: n={metrics['n']} accuracy={metrics['accuracy']:.4f} "
          f"roc_auc={metrics['roc_auc']} pr_auc={metrics['pr_auc']} mcc={metrics['mcc']:.4f}",
          file=sys.stderr)


def rename_group(rows: list[dict]) -> list[dict]:
    return [{"bucket": int(row.pop("group")), **row} for row in rows]


if __name__ == "__main__":
    run_cli(main)
