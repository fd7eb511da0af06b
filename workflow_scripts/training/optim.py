"""AdamW with decoupled weight decay on matrices only (or on every parameter: decay_all_parameters),
and a warm-up + cosine schedule.

The peak LR is `train.lr`, times the world size with `train.lr_scaling: linear`."""

from __future__ import annotations

import math

import torch

from workflow_scripts.config.train import TrainConfig


def build_optimizer(model: torch.nn.Module, cfg: TrainConfig, world_size: int = 1) -> torch.optim.Optimizer:
    """torch AdamW for every strategy (DeepSpeed gets it as a client optimizer: nothing to compile)."""
    trained = [p for p in model.parameters() if p.requires_grad]
    decay = [p for p in trained if cfg.decay_all_parameters or p.dim() >= 2]
    no_decay = [p for p in trained if not (cfg.decay_all_parameters or p.dim() >= 2)]
    groups = [
        {"params": params, "weight_decay": rate}
        for params, rate in ((decay, cfg.weight_decay), (no_decay, 0.0))
        if params
    ]
    return torch.optim.AdamW(groups, lr=cfg.scaled_lr(world_size), betas=(0.9, cfg.adam_beta2), eps=1e-8)


def warmup_cosine(total_steps: int, warmup_fraction: float, min_lr_ratio: float):
    """LR multiplier: linear warm-up, then cosine decay to `min_lr_ratio`."""
    warmup = max(1, int(round(total_steps * warmup_fraction)))

    def multiplier(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        progress = min(1.0, (step - warmup) / max(1, total_steps - warmup))
        return min_lr_ratio + (1 - min_lr_ratio) * 0.5 * (1 + math.cos(math.pi * progress))

    return multiplier


def build_scheduler(optimizer: torch.optim.Optimizer, cfg: TrainConfig, total_steps: int):
    schedule = warmup_cosine(total_steps, cfg.warmup_fraction, cfg.min_lr_ratio)
    return torch.optim.lr_scheduler.LambdaLR(optimizer, schedule)
