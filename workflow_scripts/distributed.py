"""Process-group set-up from torchrun's environment, and the model wrapping per strategy."""

from __future__ import annotations

import datetime
import os
from dataclasses import dataclass

import torch
import torch.distributed as dist


@dataclass
class DistContext:
    rank: int
    local_rank: int
    world_size: int
    device: torch.device
    backend: str | None

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    @property
    def initialized(self) -> bool:
        return dist.is_available() and dist.is_initialized()

    def barrier(self) -> None:
        if self.initialized:
            dist.barrier()

    def all_reduce_sum(self, values: list[float]) -> list[float]:
        tensor = torch.tensor(values, dtype=torch.float64, device=self.comm_device)
        if self.initialized:
            dist.all_reduce(tensor, op=dist.ReduceOp.SUM)
        return tensor.tolist()

    def gather_objects(self, obj: object) -> list[object]:
        if not self.initialized:
            return [obj]
        gathered: list[object] = [None] * self.world_size
        dist.all_gather_object(gathered, obj)
        return gathered

    @property
    def comm_device(self) -> torch.device:
        return self.device if self.backend == "nccl" else torch.device("cpu")

    def close(self) -> None:
        if self.initialized:
            dist.destroy_process_group()


def select_device(local_rank: int) -> torch.device:
    if torch.cuda.is_available():
        torch.cuda.set_device(local_rank % torch.cuda.device_count())
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


def init_distributed(timeout_s: float = 600.0) -> DistContext:
    """Join torchrun's process group (NCCL on GPU, gloo on CPU); a plain run is world size 1."""
    rank = int(os.environ.get("RANK", 0))
    world_size = int(os.environ.get("WORLD_SIZE", 1))
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    device = select_device(local_rank)
    backend = None
    if "MASTER_ADDR" in os.environ:
        backend = "nccl" if device.type == "cuda" else "gloo"
        dist.init_process_group(
            backend=backend,
            rank=rank,
            world_size=world_size,
            timeout=datetime.timedelta(seconds=timeout_s),
        )
    return DistContext(rank, local_rank, world_size, device, backend)


def wrap_model(model: torch.nn.Module, ctx: DistContext, strategy: str) -> torch.nn.Module:
    """Move the model to its device and wrap it for the chosen strategy."""
    model = model.to(ctx.device)
    if strategy == "ddp" and ctx.initialized:
        device_ids = [ctx.device.index] if ctx.device.type == "cuda" else None
        return torch.nn.parallel.DistributedDataParallel(model, device_ids=device_ids)
    return model


def unwrap_model(model: torch.nn.Module) -> torch.nn.Module:
    return getattr(model, "module", model)
