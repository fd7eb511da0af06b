"""DistributedDataParallel: every rank holds everything; gradients are all-reduced."""

from __future__ import annotations

import contextlib
from pathlib import Path

import torch

from workflow_scripts.training.checkpoint import save_tensors
from workflow_scripts.training.precision import AUTOCAST_DTYPES, device_precision
from workflow_scripts.training.strategies.base import Engine

STATE_FILE = "model_optimizer.pt"


class DDPEngine(Engine):
    name = "ddp"

    def __init__(self, model, ctx, cfg, total_steps):
        self.dtype = AUTOCAST_DTYPES[device_precision("ddp", cfg.precision, ctx.device)]
        model = model.to(ctx.device)
        super().__init__(model, ctx, cfg, total_steps)
        if ctx.initialized and ctx.world_size > 1:
            device_ids = [ctx.device.index] if ctx.device.type == "cuda" else None
            # a model that freezes parts of itself after wrapping (train_base's unit schedule) says so
            unused = bool(getattr(model, "find_unused_parameters", False))
            self.model = torch.nn.parallel.DistributedDataParallel(
                model, device_ids=device_ids, find_unused_parameters=unused
            )
        self.scaler = torch.amp.GradScaler("cuda", enabled=self.dtype == torch.float16)

    def describe(self) -> str:
        return "ddp fp32" if self.dtype is None else f"ddp {str(self.dtype).removeprefix('torch.')} autocast"

    def autocast(self):
        if self.dtype is None:
            return contextlib.nullcontext()
        return torch.autocast(self.ctx.device.type, dtype=self.dtype)

    def backward(self, loss, sync):
        skip_sync = not sync and hasattr(self.model, "no_sync")
        with self.model.no_sync() if skip_sync else contextlib.nullcontext():
            self.scaler.scale(loss).backward()

    def clip_and_step(self):
        if self.grad_clip > 0:
            self.scaler.unscale_(self.optimizer)
            torch.nn.utils.clip_grad_norm_(self.module.parameters(), self.grad_clip)
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.optimizer.zero_grad(set_to_none=True)
        self.scheduler.step()

    def save(self, directory: Path) -> None:
        if self.ctx.is_main:  # through a Python file: a full disk is an OSError naming the file
            save_tensors(
                {
                    "model": self.module.state_dict(),
                    "optimizer": self.optimizer.state_dict(),
                    "scaler": self.scaler.state_dict(),
                },
                directory / STATE_FILE,
            )

    def load(self, directory: Path) -> None:
        state = torch.load(directory / STATE_FILE, map_location=self.ctx.device, weights_only=True)
        self.module.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.scaler.load_state_dict(state["scaler"])
