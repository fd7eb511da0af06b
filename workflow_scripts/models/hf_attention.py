"""Attention for HF backbones that trains faster on CPU (model.hf_attention: auto).

With attention dropout in training, PyTorch's CPU scaled_dot_product_attention leaves its flash
kernel for the plain path, and there a third of a small BERT's step goes to `bernoulli_` drawing
one random number per attention weight (docs/performance.md). This implementation computes the
same attention and the same dropout (each weight zeroed with probability p, rounded to 1/65536,
the rest scaled by 1/(1-p)) but draws four dropout decisions from every 64-bit random word.
Everywhere else (evaluation, no dropout, GPUs, decoders, anything unusual) it hands the call to
transformers' own sdpa attention unchanged.
"""

from __future__ import annotations

import math
from typing import Any

import torch
from torch import nn

NAME = "errorseq"
LANES = 65536  # the values of one 16-bit lane of a random word


def register(transformers) -> None:
    """Make attn_implementation="errorseq" known to transformers (idempotent)."""
    from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

    transformers.AttentionInterface.register(NAME, attention_forward)
    AttentionMaskInterface.register(NAME, sdpa_mask)


def use_for(hf_model: Any, choice: str, transformers) -> str:
    """Set model.hf_attention on the model; auto takes errorseq's where the model's code lets
    transformers choose its attention, and the model's own otherwise. Returns the one in use."""
    wanted = NAME if choice == "auto" else choice
    if wanted == NAME:
        register(transformers)
        if not _can_choose(hf_model):
            return str(hf_model.config._attn_implementation)
    hf_model.set_attn_implementation(wanted)
    return wanted


def _can_choose(hf_model: nn.Module) -> bool:
    can_set = getattr(type(hf_model), "_can_set_attn_implementation", None)
    return bool(can_set and can_set()) and getattr(hf_model, "_supports_sdpa", False)


def attention_forward(
    module: nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    dropout: float = 0.0,
    scaling: float | None = None,
    **kwargs,
) -> tuple[torch.Tensor, None]:
    """The attention-interface signature: [B, H, L, D] query/key/value → ([B, L, H, D], None)."""
    if not _takes_fast_path(module, query, key, attention_mask, dropout, kwargs):
        from transformers.integrations.sdpa_attention import sdpa_attention_forward

        return sdpa_attention_forward(
            module, query, key, value, attention_mask, dropout=dropout, scaling=scaling, **kwargs
        )
    scale = scaling if scaling is not None else 1.0 / math.sqrt(query.shape[-1])
    scores = torch.matmul(query * scale, key.transpose(-1, -2))
    if attention_mask is not None:
        scores = scores + _additive(attention_mask, scores.dtype)
    weights = torch.softmax(scores, dim=-1, dtype=torch.float32).to(value.dtype)
    keep, keep_scale = dropout_keep(weights.shape, dropout)
    kept = torch.where(keep, weights, 0.0)  # saves the 1-byte mask for backward, not a float one
    return (torch.matmul(kept, value) * keep_scale).transpose(1, 2).contiguous(), None


def _takes_fast_path(module, query, key, attention_mask, dropout: float, kwargs: dict) -> bool:
    plain = (
        not getattr(module, "is_causal", False)
        and getattr(module, "num_key_value_groups", 1) == 1
        and query.shape[1] == key.shape[1]
        and (attention_mask is None or attention_mask.dtype in (torch.bool, query.dtype))
        and all(kwargs.get(name) is None for name in ("position_bias", "cache", "softcap"))
        and not kwargs.get("output_attentions", False)
    )
    return plain and dropout > 0 and module.training and query.device.type == "cpu"


def _additive(mask: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    if mask.dtype != torch.bool:
        return mask
    return torch.zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill_(
        ~mask, torch.finfo(dtype).min
    )


def dropout_keep(shape: torch.Size, p: float) -> tuple[torch.Tensor, float]:
    """Which weights dropout keeps (each dropped with probability p, rounded to 1/65536) and the
    scale 1/(1-p) for the kept. Four decisions per 64-bit word of torch's CPU generator, so
    torch.manual_seed makes them reproducible."""
    count = math.prod(shape)
    words = torch.empty((count + 3) // 4, dtype=torch.int64).random_(-(2**63), 2**63 - 1)
    lanes = words.view(torch.int16)[:count].view(shape)  # each uniform over -32768..32767
    dropped = round(p * LANES)
    return lanes >= dropped - LANES // 2, LANES / (LANES - dropped)
