"""Resuming a run: the newest checkpoint that loads, skipping (with one line) those that do not."""

from __future__ import annotations

from pathlib import Path

from workflow_scripts.errors import InputError
from workflow_scripts.training.checkpoint import TRAINER_FILE, CheckpointManager
from workflow_scripts.training.distributed import DistContext
from workflow_scripts.training.strategies.base import Engine


def load_newest_checkpoint(checkpoints: CheckpointManager, engine: Engine, ctx: DistContext) -> dict | None:
    """Load the newest checkpoint that loads into `engine`; its trainer state (with `path`), or
    None for a fresh start. A checkpoint with a file missing or cut short (files.json), a
    trainer.pt that does not load, or one the engine refuses is skipped, one line says why, and
    the one before it is tried. Collective: every rank takes the same checkpoint."""
    half_loaded = False  # an engine.load that failed may have changed some weights
    for path in checkpoints.resume_candidates():
        local_reason, state = trainer_state_or_reason(checkpoints, path)
        reason = first_reason(ctx, local_reason)
        if reason is None:
            reason = first_reason(ctx, engine_load_reason(engine, path))
            half_loaded = half_loaded or reason is not None
        if reason is None:
            return {**state, "path": str(path)}
        if ctx.is_main:
            print(
                f"note: skipping checkpoint {path}: it does not load ({reason}); trying an older one",
                flush=True,
            )
    if half_loaded:  # nothing older loaded over it: the weights are neither fresh nor resumed
        raise InputError(
            checkpoints.directory, "checkpoint", "no checkpoint loads; delete the folder to train afresh"
        )
    return None


def trainer_state_or_reason(checkpoints: CheckpointManager, path: Path) -> tuple[str | None, dict]:
    reason = checkpoints.why_not_loadable(path)
    if reason is not None:
        return reason, {}
    try:
        return None, checkpoints.load_trainer_state(path)
    except Exception as error:  # truncated, not a zip, or it holds Python objects
        return f"{TRAINER_FILE}: {one_line(error)}", {}


def engine_load_reason(engine: Engine, path: Path) -> str | None:
    try:
        engine.load(path)
    except Exception as error:  # the strategy's own files: DDP state, DCP shards, DeepSpeed's
        return one_line(error)
    return None


def first_reason(ctx: DistContext, reason: str | None) -> str | None:
    """The lowest rank's reason not to load (None where every rank can)."""
    reasons = ctx.gather_objects(reason)
    return next((f"rank {rank}: {r}" if rank else str(r) for rank, r in enumerate(reasons) if r), None)


def one_line(error: Exception) -> str:
    lines = str(error).strip().splitlines()
    return f"{type(error).__name__}: {lines[0][:200] if lines else ''}"
