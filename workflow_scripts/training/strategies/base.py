"""What every strategy offers the training loop: forward, backward, step, save, load, export."""

from __future__ import annotations

import abc
import contextlib
from pathlib import Path

import torch

from workflow_scripts.config.train import TrainConfig
from workflow_scripts.training.distributed import DistContext
from workflow_scripts.training.optim import build_optimizer, build_scheduler


def tensor_bytes(tensors) -> int:
    total = 0
    for tensor in tensors:
        local = tensor.to_local() if hasattr(tensor, "to_local") else tensor
        total += local.numel() * local.element_size()
    return total


def optimizer_state_tensors(optimizer: torch.optim.Optimizer):
    for state in optimizer.state.values():
        yield from (value for value in state.values() if torch.is_tensor(value) and value.dim() > 0)


class Engine(abc.ABC):
    """A model trained with one strategy. Calls marked collective run on every rank."""

    name = "base"

    def __init__(self, model: torch.nn.Module, ctx: DistContext, cfg: TrainConfig, total_steps: int):
        self.ctx, self.grad_clip = ctx, cfg.grad_clip  # the rest of cfg is the optimizer's
        self.module = model  # the plain module (parameters may be sharded)
        self.model = model  # what the loop calls for training forward passes
        self.optimizer = build_optimizer(model, cfg, ctx.world_size)
        self.scheduler = build_scheduler(self.optimizer, cfg, total_steps)

    # ---- one optimizer step -------------------------------------------------------------
    def autocast(self):
        return contextlib.nullcontext()

    def eval_model(self) -> torch.nn.Module:
        """The module for validation; every rank runs the same number of forward passes."""
        return self.module

    def backward(self, loss: torch.Tensor, sync: bool) -> None:
        loss.backward()

    def clip_and_step(self) -> None:
        if self.grad_clip > 0:
            torch.nn.utils.clip_grad_norm_(self.module.parameters(), self.grad_clip)
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        self.scheduler.step()

    def last_lr(self) -> float:
        return self.scheduler.get_last_lr()[0]

    # ---- state ---------------------------------------------------------------------------
    def full_state_dict(self) -> dict:
        """Collective: the whole model as plain fp32 CPU tensors (complete on rank 0)."""
        return {
            key: value.detach().float().cpu() if value.is_floating_point() else value.cpu()
            for key, value in self.module.state_dict().items()
        }

    @abc.abstractmethod
    def save(self, directory: Path) -> None:
        """Collective: model and optimizer state into `directory` (exists on rank 0)."""

    @abc.abstractmethod
    def load(self, directory: Path) -> None:
        """Collective: the state `save` wrote."""

    def extra_state(self) -> dict:
        return {"scheduler": self.scheduler.state_dict()}

    def load_extra_state(self, state: dict) -> None:
        self.scheduler.load_state_dict(state["scheduler"])

    def shard_bytes(self) -> dict:
        """This rank's parameter and optimizer-state bytes (what sharding shrinks)."""
        return {
            "param_bytes": tensor_bytes(self.module.parameters()),
            "optimizer_bytes": tensor_bytes(optimizer_state_tensors(self.optimizer)),
        }

    def describe(self) -> str:
        return self.name
