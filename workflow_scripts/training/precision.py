"""`train.precision` → the precision a run computes in, decided here once for every strategy.

`auto` is bf16 on CUDA GPUs that support it, else fp32. fp16 needs CUDA and is refused with fsdp
(FSDP2 here has no loss scaling). The launcher calls `check_precision` before torchrun starts N
ranks that would each fail the same way; the strategies call `resolve_precision`.
"""

from __future__ import annotations

import torch

from workflow_scripts.errors import InputError

AUTOCAST_DTYPES = {"fp32": None, "bf16": torch.bfloat16, "fp16": torch.float16}


def check_precision(strategy: str, precision: str, cuda: bool) -> None:
    """The fp16 rules, the one place they are written."""
    if precision != "fp16":
        return
    if strategy == "fsdp":
        raise InputError("config", "train.precision", "fsdp trains in fp32 or bf16 here; use bf16")
    if not cuda:
        raise InputError("config", "train.precision", "fp16 needs a CUDA GPU; use bf16 or fp32 on CPU")


def resolve_precision(strategy: str, precision: str, *, cuda: bool, bf16: bool) -> str:
    """'fp32', 'bf16' or 'fp16' for a device that is (not) CUDA and does (not) support bf16."""
    check_precision(strategy, precision, cuda)
    if precision == "auto":
        return "bf16" if cuda and bf16 else "fp32"
    if precision == "bf16" and not bf16:
        raise InputError("config", "train.precision", "bf16 is not supported on this GPU; use fp16 or fp32")
    return precision


def device_precision(strategy: str, precision: str, device: torch.device) -> str:
    """`resolve_precision` for this rank's device (CPUs compute bf16 through autocast)."""
    cuda = device.type == "cuda"
    return resolve_precision(strategy, precision, cuda=cuda, bf16=not cuda or torch.cuda.is_bf16_supported())
