"""Where and in what precision the base model runs (calling.base_model.device and precision):
`auto` picks CUDA where torch sees it; bf16/fp16 only where the hardware runs them natively
(emulated they are ~10x slower than fp32: refused, naming the key)."""

from __future__ import annotations

import torch

from workflow_scripts.errors import InputError


def resolve_device(name: str) -> torch.device:
    if name == "cuda" and not torch.cuda.is_available():
        raise InputError(
            "config",
            "calling.base_model.device",
            "cuda, but torch sees no CUDA device here (use auto or cpu)",
        )
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    return torch.device(name)


PRECISIONS = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}


def precision_dtype(precision: str, device: torch.device) -> torch.dtype:
    """The convolutions' dtype under autocast (the output layer and the ensemble mean stay fp32)."""
    if precision != "fp32" and not fast_on(precision, device):
        where = "a CPU without AVX-512/AMX" if device.type == "cpu" else "a GPU without bf16"
        raise InputError(
            "config",
            "calling.base_model.precision",
            f"{precision} on {where} runs emulated, ~10x slower than fp32 (docs/performance.md); "
            "use fp32 here",
        )
    return PRECISIONS[precision]


def fast_on(precision: str, device: torch.device) -> bool:
    if device.type == "cuda":
        return precision == "fp16" or torch.cuda.is_bf16_supported(including_emulation=False)
    if precision == "bf16":
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    return bool(torch.ops.mkldnn._is_mkldnn_fp16_supported())
