"""The model's maths per training step, with transformers' sdpa attention (what the Trainer
runs) and with errorseq's (models/hf_attention.py): benchmarks/peer_host.py's last rows."""

from __future__ import annotations

import time
from pathlib import Path

import torch


def training_maths(model_dir: Path, prepared: list[dict], attention: str, device: str):
    """A function running the maths of one training step per batch, `attention` as
    model.hf_attention names it."""
    import transformers

    from workflow_scripts.models import hf_attention

    model = transformers.AutoModelForSequenceClassification.from_pretrained(str(model_dir), num_labels=2)
    hf_attention.use_for(model, attention, transformers)
    model.to(device).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def maths() -> None:
        for batch in prepared:
            out = model(input_ids=batch["ids"], attention_mask=batch["mask"].long(), labels=batch["labels"])
            out.loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
        if device == "cuda":
            torch.cuda.synchronize()

    return maths


def model_step_ms(model_dir: Path, prepared: list[dict], repeats: int, device: str) -> dict[str, float]:
    """ms per step with transformers' sdpa attention and with errorseq's, one thread (as each
    rank runs), the two timed in turn so that the load falls on both alike; best of `repeats`."""
    runs = {
        key: training_maths(model_dir, prepared, attention, device)
        for attention, key in (("sdpa", "model_step_ms"), ("auto", "model_step_errorseq_ms"))
    }
    best = dict.fromkeys(runs, float("inf"))
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        for _ in range(repeats):
            for key, maths in runs.items():
                began = time.perf_counter()
                maths()
                best[key] = min(best[key], 1000 * (time.perf_counter() - began) / len(prepared))
    finally:
        torch.set_num_threads(threads)
    return best
