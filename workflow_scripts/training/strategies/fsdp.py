"""FSDP2 (`fully_shard`): parameters, gradients and optimizer state sharded across ranks."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import torch
import torch.distributed.checkpoint as dcp
from torch.distributed.checkpoint.state_dict import (
    StateDictOptions,
    get_model_state_dict,
    get_state_dict,
    set_state_dict,
)
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import CPUOffloadPolicy, MixedPrecisionPolicy, fully_shard

from workflow_scripts.training.precision import device_precision
from workflow_scripts.training.strategies.base import Engine

DCP_FOLDER = "dcp"


def mixed_precision(precision: str) -> MixedPrecisionPolicy:
    """bf16 compute with fp32 gradient reduction, or plain fp32 (the precision as resolved)."""
    if precision == "fp32":
        return MixedPrecisionPolicy()
    return MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)


def shard_model(model: torch.nn.Module, ctx, cfg, precision: str) -> torch.nn.Module:
    """One FSDP unit per block (the ModuleList), then the root for the rest."""
    mesh = init_device_mesh(ctx.device.type, (ctx.world_size,))
    options: dict[str, Any] = {"mesh": mesh, "mp_policy": mixed_precision(precision)}
    if cfg.offload_params and ctx.device.type == "cuda":
        options["offload_policy"] = CPUOffloadPolicy()
    elif cfg.offload_params and ctx.is_main:
        print("note: train.offload_params has no effect on CPU devices", file=sys.stderr)
    blocks: Any = model.blocks
    for block in blocks:
        fully_shard(block, **options)
    fully_shard(model, **options)
    return model


class FSDPEngine(Engine):
    name = "fsdp"

    def __init__(self, model, ctx, cfg, total_steps):
        self.precision = device_precision("fsdp", cfg.precision, ctx.device)  # fp32 or bf16
        model = shard_model(model.to(ctx.device), ctx, cfg, self.precision)
        super().__init__(model, ctx, cfg, total_steps)

    def describe(self) -> str:
        return f"fsdp (FSDP2 fully_shard) {self.precision}"

    def backward(self, loss, sync):
        self.module.set_requires_gradient_sync(sync)
        loss.backward()

    def full_state_dict(self) -> dict:
        options = StateDictOptions(full_state_dict=True, cpu_offload=True)
        state: dict[str, Any] = get_model_state_dict(self.module, options=options)
        return {key: value.float() if value.is_floating_point() else value for key, value in state.items()}

    def save(self, directory: Path) -> None:
        model_state, optim_state = get_state_dict(self.module, self.optimizer)
        dcp.save({"model": model_state, "optimizer": optim_state}, checkpoint_id=directory / DCP_FOLDER)

    def load(self, directory: Path) -> None:
        model_state, optim_state = get_state_dict(self.module, self.optimizer)
        state: dict[str, Any] = {"model": model_state, "optimizer": optim_state}
        dcp.load(state, checkpoint_id=directory / DCP_FOLDER)
        set_state_dict(
            self.module, self.optimizer, model_state_dict=state["model"], optim_state_dict=state["optimizer"]
        )
