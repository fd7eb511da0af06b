"""Training strategies behind one interface (see base.Engine): ddp, fsdp, deepspeed.

Importing the package loads no strategy library and no torch (deepspeed_user is read while the
workflow is parsed)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

    from workflow_scripts.config.train import TrainConfig
    from workflow_scripts.training.distributed import DistContext
    from workflow_scripts.training.strategies.base import Engine


def build_engine(
    model: torch.nn.Module, ctx: DistContext, cfg: TrainConfig, total_steps: int, micro_batch: int = 1
) -> Engine:
    """Wrap `model` for `cfg.strategy`; strategy libraries are imported only when chosen."""
    if cfg.strategy == "ddp":
        from workflow_scripts.training.strategies.ddp import DDPEngine

        return DDPEngine(model, ctx, cfg, total_steps)
    if cfg.strategy == "fsdp":
        from workflow_scripts.training.strategies.fsdp import FSDPEngine

        return FSDPEngine(model, ctx, cfg, total_steps)
    if cfg.strategy == "deepspeed":
        from workflow_scripts.training.strategies.deepspeed_engine import DeepSpeedEngine

        return DeepSpeedEngine(model, ctx, cfg, total_steps, micro_batch)
    raise ValueError(f"unknown strategy {cfg.strategy!r}")
