"""Train one experiment's classifier; run under torchrun (see workflow_scripts.training.launch).

    torchrun --standalone --nproc_per_node 2 -m workflow_scripts.training.train --windows ... --manifest ...

Table of contents: config → process group → data and model → strategy engine
(workflow_scripts.training.strategies) → Trainer loop (trainer.py, checkpoints in checkpoint.py) → export of
one plain state dict, its config, the step log and (deepspeed) the DeepSpeed JSON used.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

import torch

from workflow_scripts.training.checkpoint import CheckpointManager, run_signature
from workflow_scripts.training.batches import BatchCollator, load_split
from workflow_scripts.training.distributed import DistContext, run_in_process_group
from workflow_scripts.errors import InputError, run_cli
from workflow_scripts.io_utils import atomic_path, write_json
from workflow_scripts.training.mlm import load_pretrained_encoder
from workflow_scripts.models.builtin import MODEL_DEFAULTS, build_model, count_parameters
from workflow_scripts.training.strategies import build_engine
from workflow_scripts.training.telemetry import MetricsSink, require_tensorboard
from workflow_scripts.tokenization.tokenizers import load_tokenizer
from workflow_scripts.config.train import TrainConfig
from workflow_scripts.training.loop import Trainer

DEEPSPEED_JSON = "deepspeed_config.json"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--windows", required=True)
    parser.add_argument("--manifest", required=True)
    parser.add_argument("--bucket-summary", required=True)
    parser.add_argument("--model-config", required=True, help="the model: section as JSON")
    parser.add_argument("--train-config", required=True, help="the train: section as JSON")
    parser.add_argument("--checkpoint-dir", required=True)
    parser.add_argument("--out-model", required=True)
    parser.add_argument("--out-config", required=True)
    parser.add_argument("--out-steps", required=True)
    parser.add_argument("--experiment", default="experiment")
    parser.add_argument("--init-encoder", help="encoder.pt written by pretrain: start from it")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    args = parse_args(argv)
    cfg = TrainConfig.from_json(args.train_config)
    if cfg.tensorboard:
        require_tensorboard()
    run_in_process_group(cfg.strategy, cfg.seed, lambda ctx: run_training(args, cfg, ctx))


def run_training(args: argparse.Namespace, cfg: TrainConfig, ctx: DistContext) -> None:
    summary = json.loads(Path(args.bucket_summary).read_text())
    tokenizer = load_tokenizer(summary["tokenizer"])
    max_tokens = int(summary["max_length"])
    model_cfg = {**MODEL_DEFAULTS, **json.loads(args.model_config)}
    train, val = (load_split(args.windows, args.manifest, s) for s in ("train", "val"))
    if len(train) == 0:
        raise InputError(args.manifest, "split", "no rows in the train split")
    model = build_model(model_cfg, tokenizer.vocab_size, max_tokens)
    maybe_init_encoder(args, model, ctx)
    torch.manual_seed(cfg.seed + ctx.rank)  # dropout differs per rank; the strategy syncs weights
    if ctx.is_main:
        print(f"training {args.experiment}: {count_parameters(model):,} parameters, "
              f"{len(train)} train / {len(val)} val windows, world size {ctx.world_size}, "
              f"device {ctx.device.type}, backend {ctx.backend}", flush=True)
    trainer = Trainer(
        cfg, ctx, lambda total: build_engine(model, ctx, cfg, total, max(summary["batch_sizes"])),
        train, val,
        (BatchCollator(train, tokenizer, max_tokens), BatchCollator(val, tokenizer, max_tokens)),
        summary["batch_sizes"],
        CheckpointManager(args.checkpoint_dir, ctx.is_main, ctx.barrier, run_signature(
            cfg.to_dict(), model_cfg, ctx.world_size,
            {"windows": args.windows, "manifest": args.manifest, "summary": args.bucket_summary,
             "encoder": args.init_encoder})),
        metrics_sink(args, cfg, ctx),
    )
    if ctx.is_main:
        print(f"strategy: {trainer.engine.describe()}", flush=True)
    progress = trainer.train()
    final_state = trainer.engine.full_state_dict()  # collective: shards consolidated
    trainer.metrics.close()
    if ctx.is_main:
        export(args, trainer, model_cfg, tokenizer, max_tokens, progress, final_state)


def maybe_init_encoder(args: argparse.Namespace, model: torch.nn.Module, ctx: DistContext) -> None:
    """Start from the pretrained encoder (pretrain rule); the classification head stays fresh."""
    if not args.init_encoder:
        return
    loaded, fresh = load_pretrained_encoder(model, args.init_encoder)
    if ctx.is_main:
        print(f"initialised {loaded} encoder tensors from {args.init_encoder}; "
              f"{len(fresh)} fresh (head)", flush=True)


def metrics_sink(args: argparse.Namespace, cfg: TrainConfig, ctx: DistContext) -> MetricsSink:
    tensorboard = str(Path(args.out_model).parent / "tensorboard") if cfg.tensorboard else None
    return MetricsSink(Path(args.checkpoint_dir) / "steps.partial.jsonl", ctx.is_main, tensorboard)


def export(args, trainer: Trainer, model_cfg: dict, tokenizer, max_tokens: int, progress,
           final_state: dict) -> None:
    """Write the plain state dict (best epoch), its config, the step log and the DeepSpeed JSON."""
    best = trainer.checkpoints.load_best()
    with atomic_path(args.out_model) as tmp:
        torch.save(best if best is not None else final_state, tmp)
    if hasattr(trainer.engine, "config"):
        write_json(Path(args.out_model).parent / DEEPSPEED_JSON, trainer.engine.config)
    write_json(args.out_config, {
        "experiment": args.experiment,
        "model": model_cfg,
        "tokenizer": tokenizer.to_dict(),
        "max_tokens": max_tokens,
        "train": trainer.cfg.to_dict(),
        "world_size": trainer.ctx.world_size,
        "optimizer_steps": progress.step,
        "best_epoch": progress.best_epoch,
        "best_val_loss": progress.best_val_loss,
        "validation": progress.history,
        "strategy": trainer.engine.describe(),
    })
    with atomic_path(args.out_steps) as tmp:
        shutil.copyfile(trainer.metrics.path, tmp)
    print(f"wrote {args.out_model} (best epoch {progress.best_epoch})", file=sys.stderr)


if __name__ == "__main__":
    run_cli(main)
