"""One scorer for every peer (benchmarks/peers.py): the test ROC-AUC of exported weights."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import torch


def errorseq_model(state: dict, model_dir: Path):
    """The exported state dict (HFSequenceClassifier: `hf.` + the BERT's own keys) in a BERT."""
    from transformers import AutoModelForSequenceClassification

    model = AutoModelForSequenceClassification.from_pretrained(str(model_dir), num_labels=2)
    strange = [key for key in state if not key.startswith("hf.")]
    if strange:
        raise SystemExit(f"peers: errorseq's model.pt holds keys outside the BERT: {strange[:3]}")
    model.load_state_dict({key.removeprefix("hf."): value for key, value in state.items()})
    return model


@torch.no_grad()
def test_roc_auc(model, model_dir: Path, windows: str, batch_size: int = 64) -> float:
    """ROC-AUC of P(label 1) on the test split: the same tokenizer, batching and maths for all."""
    from sklearn.metrics import roc_auc_score
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    test = pl.read_parquet(windows, columns=["sequence", "label", "split"]).filter(pl.col("split") == "test")
    encoded = tokenizer(test["sequence"].to_list())["input_ids"]
    order = np.argsort([len(ids) for ids in encoded], kind="stable")
    model.eval()
    scores = np.zeros(len(encoded))
    for start in range(0, len(order), batch_size):
        rows = order[start : start + batch_size]
        batch = tokenizer.pad({"input_ids": [encoded[i] for i in rows]}, return_tensors="pt")
        logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
        scores[rows] = torch.softmax(logits.float(), -1)[:, 1].numpy()
    return float(roc_auc_score(test["label"].to_numpy(), scores))
