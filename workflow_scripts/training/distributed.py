"""Process-group set-up from torchrun's environment (models are wrapped in workflow_scripts.training.strategies).

Every collective waits at most cluster.collective_timeout_s (the section the launcher exports):
a rank whose peer died or whose node lost its network fails instead of hanging. Rank 0 logs
which host every rank runs on.
"""

from __future__ import annotations

import ctypes
import datetime
import faulthandler
import logging
import os
import signal
import socket
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import NoReturn

import torch
import torch.distributed as dist

from workflow_scripts.training.cluster_env import collective_timeout_s

PR_SET_PDEATHSIG = 1


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

    def all_reduce_max(self, value: float) -> float:
        tensor = torch.tensor([value], dtype=torch.float64, device=self.comm_device)
        if self.initialized:
            dist.all_reduce(tensor, op=dist.ReduceOp.MAX)
        return float(tensor.item())

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
        avoid_per_shape_kernels()
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


def avoid_per_shape_kernels() -> None:
    """Bucketed batches come in hundreds of padded lengths. cuDNN's attention backend of
    scaled_dot_product_attention (bf16/fp16) builds a graph for every new shape: ~120-150 ms
    each on an H100, 6-7x the whole step (docs/performance.md). Flash/memory-efficient attention
    take any length at no extra cost and are as fast once cuDNN's graphs are warm."""
    torch.backends.cuda.enable_cudnn_sdp(False)


def die_with_launcher() -> None:
    """torchrun starts workers in their own sessions: if torchrun itself is killed hard, its
    workers would train on as orphans. Linux: have the kernel SIGKILL this worker instead."""
    if not sys.platform.startswith("linux") or "TORCHELASTIC_RUN_ID" not in os.environ:
        return
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except OSError:
        return
    if os.getppid() == 1:  # the launcher died before prctl took effect
        os._exit(1)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def ensure_rendezvous_env() -> None:
    """A plain `python -m workflow_scripts.training.worker` is a world of one (FSDP and DeepSpeed need a group)."""
    if "MASTER_ADDR" in os.environ:
        return
    os.environ.update(
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(free_port()),
        RANK="0",
        WORLD_SIZE="1",
        LOCAL_RANK="0",
        LOCAL_WORLD_SIZE="1",
    )


def init_distributed(timeout_s: float | None = None, require_group: bool = False) -> DistContext:
    """Join torchrun's process group (NCCL on GPU, gloo on CPU); a plain run is world size 1.
    timeout_s: how long one collective may wait (default: cluster.collective_timeout_s)."""
    die_with_launcher()
    if require_group:
        ensure_rendezvous_env()
    rank = int(os.environ.get("RANK", 0))
    world_size = int(os.environ.get("WORLD_SIZE", 1))
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    device = select_device(local_rank)
    backend = None
    if "MASTER_ADDR" in os.environ:
        backend = "nccl" if device.type == "cuda" else "gloo"
        timeout_s = collective_timeout_s() if timeout_s is None else timeout_s
        dist.init_process_group(
            backend=backend,
            rank=rank,
            world_size=world_size,
            timeout=datetime.timedelta(seconds=timeout_s),
            device_id=device if device.type == "cuda" else None,
        )
        ctx = DistContext(rank, local_rank, world_size, device, backend)
        log_rank_hosts(ctx, timeout_s)
        return ctx
    return DistContext(rank, local_rank, world_size, device, backend)


def log_rank_hosts(ctx: DistContext, timeout_s: float) -> None:
    """Rank 0 prints one line: the group, its store and the host of every rank."""
    if ctx.world_size < 2:
        return
    hosts = ctx.gather_objects(socket.gethostname())
    if ctx.is_main:
        ranks = ", ".join(f"{rank} {host}" for rank, host in enumerate(hosts))
        store = f"{os.environ.get('MASTER_ADDR')}:{os.environ.get('MASTER_PORT')}"
        print(
            f"process group: {ctx.backend}, world size {ctx.world_size}, store {store}, "
            f"collective timeout {timeout_s:g} s; rank host: {ranks}",
            flush=True,
        )


def run_in_process_group(strategy: str, seed: int, work) -> None:
    """Join torchrun's group (FSDP/DeepSpeed need one even alone), seed, run work(ctx), leave."""
    ctx = init_distributed(require_group=strategy != "ddp")
    try:
        torch.manual_seed(seed)
        work(ctx)
    finally:
        ctx.close()


def exit_without_teardown(main: Callable[[], None]) -> NoReturn:
    """Run a rank's main, then end the process at once with main's exit status.

    torch keeps a gloo process group alive after destroy_process_group once DDP or DeepSpeed has
    used it; freeing it in interpreter teardown sometimes aborts the rank ("terminate called
    without an active exception", SIGABRT) after a run that succeeded, and torchrun then reports
    the whole launch failed. Every output is written and synced before main returns, so skipping
    the teardown loses nothing. A native crash inside main prints every thread's Python stack."""
    faulthandler.enable()
    try:
        main()
        code = 0
    except SystemExit as stop:
        code = exit_status(stop)
    except BaseException:
        traceback.print_exc()
        code = 1
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def exit_status(stop: SystemExit) -> int:
    """The status Python itself would exit with for this SystemExit (a message goes to stderr)."""
    if stop.code is None or isinstance(stop.code, int):
        return stop.code or 0
    print(stop.code, file=sys.stderr)
    return 1
