"""Attention for HF backbones that trains faster on CPU (model.hf_attention: auto).

In CPU training with attention dropout it is models/dropout_attention.py (the same maths, a
quarter of the random words); everywhere else (evaluation, no dropout, GPUs, decoders, anything
unusual) it hands the call to transformers' own sdpa attention unchanged.
"""

from __future__ import annotations

import math
from typing import Any

import torch
from torch import nn

from workflow_scripts.models.dropout_attention import additive_bias, attention_with_dropout

NAME = "errorseq"


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
    bias = None if attention_mask is None else additive_bias(attention_mask, query.dtype)
    return attention_with_dropout(query, key, value, bias, dropout, scale).transpose(1, 2).contiguous(), None


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
