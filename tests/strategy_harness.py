"""Run the same few optimizer steps under several strategies in one torchrun launch.

    torchrun --standalone --nproc_per_node 2 -m tests.strategy_harness SPEC.json OUT_DIR   (from the repository root)

SPEC: {"model": {...}, "steps": N, "global_batch": B, "seq_len": T, "cases": {name: train_cfg}}.
Every rank takes its contiguous 1/world of each global batch; rank 0 writes OUT_DIR/results.json
(per step global loss, step seconds, per-rank parameter/optimizer bytes) and OUT_DIR/<case>.pt.
`reference_run` trains the same steps in one process on the whole global batch.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import torch

from tests.train_fixtures import train_config
from workflow_scripts.models.builtin import build_model
from workflow_scripts.training.distributed import DistContext, exit_without_teardown, init_distributed
from workflow_scripts.training.loop import forward_loss
from workflow_scripts.training.objectives.classification import classification_loss
from workflow_scripts.training.strategies import build_engine

VOCAB = 8


def make_batches(spec: dict) -> list[dict]:
    generator = torch.Generator().manual_seed(1234)
    batches = []
    for _ in range(spec["steps"]):
        b, t = spec["global_batch"], spec["seq_len"]
        ids = torch.randint(1, VOCAB, (b, t), generator=generator)
        lengths = torch.randint(t // 2, t + 1, (b,), generator=generator)
        mask = torch.arange(t).unsqueeze(0) < lengths.unsqueeze(1)
        labels = torch.randint(0, 2, (b,), generator=generator)
        batches.append({"ids": ids * mask, "mask": mask, "labels": labels})
    return batches


def micro_batches(batch: dict, rank: int, world: int, accumulation: int) -> list[dict]:
    """This rank's share of a global batch, split into `accumulation` micro-batches; micro-batch i
    of every rank together is micro-batch i of the one-process run."""
    size = batch["ids"].shape[0] // (world * accumulation)
    out = []
    for i in range(accumulation):
        start = (i * world + rank) * size
        out.append({k: v[start : start + size] for k, v in batch.items()})
    return out


def train_case(spec: dict, train_cfg: dict, ctx: DistContext) -> tuple[object, list[float], float]:
    cfg = train_config(**{"warmup_fraction": 0.0, "seed": 0, **train_cfg})
    torch.manual_seed(0)
    model = build_model(spec["model"], VOCAB, spec["seq_len"])
    engine = build_engine(model, ctx, cfg, spec["steps"], micro_batch=spec["global_batch"])
    losses, times = [], []
    for batch in make_batches(spec):
        start = time.perf_counter()
        total = 0.0
        parts = micro_batches(batch, ctx.rank, ctx.world_size, cfg.grad_accumulation)
        for i, part in enumerate(parts):
            loss = forward_loss(engine, classification_loss, part) / len(parts)
            engine.backward(loss, sync=i == len(parts) - 1)
            total += loss.item()
        engine.clip_and_step()
        times.append(time.perf_counter() - start)
        losses.append(ctx.all_reduce_sum([total])[0] / ctx.world_size)
    step_s = sorted(times[1:] or times)[len(times[1:] or times) // 2]  # median after the first
    return engine, losses, step_s


def reference_run(spec: dict, train_cfg: dict) -> tuple[dict, list[float]]:
    """The same steps in this process, world size 1, no process group."""
    ctx = DistContext(0, 0, 1, torch.device("cpu"), None)
    engine, losses, _ = train_case(spec, {**train_cfg, "strategy": "ddp"}, ctx)
    return engine.full_state_dict(), losses


def main(spec_path: str, out_dir: str) -> None:
    spec = json.loads(Path(spec_path).read_text())
    out = Path(out_dir)
    ctx = init_distributed(require_group=True)
    results = {}
    try:
        for name, train_cfg in spec["cases"].items():
            engine, losses, step_s = train_case(spec, train_cfg, ctx)
            state = engine.full_state_dict()
            shard_bytes = ctx.gather_objects(engine.shard_bytes())
            if ctx.is_main:
                torch.save(state, out / f"{name}.pt")
                results[name] = {
                    "losses": losses,
                    "step_s": step_s,
                    "bytes": shard_bytes,
                    "strategy": engine.describe(),
                }
                print(f"{name}: {engine.describe()} {step_s * 1e3:.1f} ms/step {shard_bytes}", flush=True)
            del engine
    finally:
        if ctx.is_main:
            (out / "results.json").write_text(json.dumps(results, indent=1))
        ctx.close()


if __name__ == "__main__":
    exit_without_teardown(lambda: main(*sys.argv[1:3]))
