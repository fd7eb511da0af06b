"""One training run, the same for every objective (train: classification, pretrain: masked LM).

Table of contents: bucket summary and tokenizer → the objective's data and model → strategy
engine (training/strategies) → Trainer loop (loop.py, checkpoints in checkpoint.py) → export of
the best epoch's weights, the run's JSON record, the step log and (deepspeed) the DeepSpeed JSON.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import torch

from workflow_scripts.artifacts import WEIGHTS_DIGEST_FIELD
from workflow_scripts.config.train import TrainConfig, settings_digest
from workflow_scripts.io_utils import atomic_path, sha256_file, write_json
from workflow_scripts.models.builtin import count_parameters
from workflow_scripts.source_digest import rule_code_digest
from workflow_scripts.tokenization.tokenizers import load_tokenizer
from workflow_scripts.training.checkpoint import CheckpointManager, run_signature, save_tensors
from workflow_scripts.training.distributed import DistContext
from workflow_scripts.training.loop import Trainer, TrainProgress
from workflow_scripts.training.objectives.base import Objective
from workflow_scripts.training.run_spec import RunSpec
from workflow_scripts.training.stop_signal import TrainingInterrupted
from workflow_scripts.training.strategies import build_engine
from workflow_scripts.training.telemetry import MetricsSink, Progress, open_console, require_tensorboard

DEEPSPEED_JSON = "deepspeed_config.json"
STEP_LOG_PARTIAL = "steps.partial.jsonl"


def run(objective: Objective, cfg: TrainConfig, spec: RunSpec, ctx: DistContext) -> None:
    """`cfg`: the train: section (for masked_lm with pretrain:'s epochs, lr and max_steps); the
    loop, the objective and the checkpoints each get only what they read of it."""
    if cfg.tensorboard:
        require_tensorboard()
    summary = json.loads(Path(spec.bucket_summary).read_text())
    tokenizer = load_tokenizer(summary["tokenizer"])
    max_tokens = int(summary["max_length"])
    train, val = objective.load_data(spec, summary, tokenizer)
    model = objective.build_model(spec, tokenizer.vocab_size, max_tokens, ctx)
    torch.manual_seed(cfg.seed + ctx.rank)  # dropout differs per rank; the strategy syncs weights
    if ctx.is_main:
        print(
            f"{objective.title()} {spec.experiment}: {count_parameters(model):,} parameters, "
            f"{len(train)} train / {len(val)} val windows, world size {ctx.world_size}, "
            f"device {ctx.device.type}, backend {ctx.backend}",
            flush=True,
        )
    micro_batch = max(summary["batch_sizes"])
    trainer = Trainer(
        objective,
        cfg.loop_settings(),
        ctx,
        lambda total: build_engine(model, ctx, cfg, total, micro_batch),
        train,
        val,
        objective.collators(train, val, tokenizer, max_tokens),
        summary["batch_sizes"],
        CheckpointManager(
            spec.checkpoint_dir, ctx.is_main, ctx.barrier, resume_signature(objective, cfg, spec, ctx)
        ),
        metrics_sink(spec, cfg.tensorboard, ctx),
        Progress(
            ctx.is_main, open_console(spec.console) if ctx.is_main else None, console_label(objective, spec)
        ),
    )
    if ctx.is_main:
        print(f"strategy: {trainer.engine.describe()}", flush=True)
    try:
        progress = trainer.train()
    except TrainingInterrupted as stopped:
        trainer.bar.say(str(stopped))
        raise
    final_state = trainer.engine.full_state_dict()  # collective: shards consolidated
    trainer.metrics.close()
    if ctx.is_main:
        best = trainer.checkpoints.load_best()
        export(
            spec,
            trainer,
            progress,
            best if best is not None else final_state,
            {**objective.describe(tokenizer, max_tokens), "train": cfg.to_dict()},
        )
        trainer.checkpoints.mark_finished()  # a forced rerun trains afresh
        trainer.bar.say(f"done: {spec.out_weights} (best epoch {progress.best_epoch})")


def console_label(objective: Objective, spec: RunSpec) -> str:
    return f"{objective.rule} {spec.experiment}"


def resume_signature(objective: Objective, cfg: TrainConfig, spec: RunSpec, ctx: DistContext) -> dict:
    """What a checkpoint must share with this run to be resumed from (checkpoint.run_signature)."""
    inputs, settings = objective.resume_key(spec)
    files = {"windows": spec.windows, "manifest": spec.manifest, "summary": spec.bucket_summary, **inputs}
    return run_signature(
        settings_digest(cfg.to_dict()),
        objective.model_section.to_completed(),
        ctx.world_size,
        files,
        code=rule_code_digest(objective.rule),  # a code-changed rerun trains afresh
        **settings,
    )


def metrics_sink(spec: RunSpec, tensorboard: bool, ctx: DistContext) -> MetricsSink:
    tensorboard_dir = str(Path(spec.out_weights).parent / "tensorboard") if tensorboard else None
    return MetricsSink(Path(spec.checkpoint_dir) / STEP_LOG_PARTIAL, ctx.is_main, tensorboard_dir)


def export(spec: RunSpec, trainer: Trainer, progress: TrainProgress, state: dict, described: dict) -> None:
    """Rank 0: the weights, the DeepSpeed JSON used, the run's JSON record (with the weights'
    sha256, which evaluate checks) and the step log."""
    with atomic_path(spec.out_weights) as tmp:
        save_tensors(trainer.objective.exported_weights(state), tmp)
        weights_sha256 = sha256_file(tmp)
    if hasattr(trainer.engine, "config"):
        write_json(Path(spec.out_weights).parent / DEEPSPEED_JSON, trainer.engine.config)
    write_json(
        spec.out_config,
        {
            "experiment": spec.experiment,
            **described,
            "world_size": trainer.ctx.world_size,
            "optimizer_steps": progress.step,
            "best_epoch": progress.best_epoch,
            "best_val_loss": progress.best_val_loss,
            "validation": progress.history,
            "strategy": trainer.engine.describe(),
            WEIGHTS_DIGEST_FIELD: weights_sha256,
        },
    )
    with atomic_path(spec.out_steps) as tmp:
        shutil.copyfile(trainer.metrics.path, tmp)
    print(f"wrote {spec.out_weights} (best epoch {progress.best_epoch})", file=sys.stderr)
