"""Attention with dropout on CPU, without PyTorch's slow path.

In training with attention dropout, PyTorch's CPU scaled_dot_product_attention (behind
nn.MultiheadAttention and transformers' sdpa attention) leaves its flash kernel for the plain
path, where `bernoulli_` draws one random number per attention weight: about a third of a small
BERT's step. This is the same attention and dropout (each weight zeroed with probability p,
rounded to 1/65536, the rest scaled by 1/(1-p)) with four dropout decisions drawn from every
64-bit random word: a small BERT's CPU training step runs 1.2-1.3x faster, the built-in
transformer's 1.3-1.6x (docs/performance.md, benchmarks/attention_dropout.py).
"""

from __future__ import annotations

import math

import torch

LANES = 65536  # the values of one 16-bit lane of a random word


def attention_with_dropout(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    bias: torch.Tensor | None,
    p: float,
    scale: float,
) -> torch.Tensor:
    """softmax(query·keyᵀ·scale + bias) with dropout p, times value: [B, H, L, D] each, `bias`
    additive and broadcastable to [B, H, L, L]; returns [B, H, L, D]."""
    scores = torch.matmul(query * scale, key.transpose(-1, -2))
    if bias is not None:
        scores.add_(bias)  # in place: matmul keeps its inputs for backward, not its output
    weights = torch.softmax(scores, dim=-1, dtype=torch.float32).to(value.dtype)
    keep, keep_scale = dropout_keep(weights.shape, p)
    kept = torch.where(keep, weights, 0.0)  # saves the 1-byte mask for backward, not a float one
    return torch.matmul(kept, value) * keep_scale


def additive_bias(mask: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """A boolean mask (True = attend) as an additive one; an additive mask as it is."""
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
