"""Built-in sequence classifiers for DNA windows: a dilated 1D-CNN and a small transformer.

Both take token ids [B, T], a boolean attention mask [B, T] and, when trained with call inputs
(models/call_inputs.py), the call's features [B, F], and with score channels
(models/score_channels.py) the base model's scores per token [B, T, C], projected and added to
the token embeddings; they return logits [B, 2] (index 1 = the error class). Their settings are
the typed `model:` section (config/types.py ModelSection).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

from workflow_scripts.config.types import ModelSection, complete_typed_section
from workflow_scripts.models.call_inputs import FusedHead
from workflow_scripts.models.dropout_attention import additive_bias, attention_with_dropout
from workflow_scripts.models.score_channels import ScoreProjection


class ConvBlock(nn.Module):
    """Residual dilated convolution over the sequence, padding positions kept at zero."""

    def __init__(self, d_model: int, kernel_size: int, dilation: int, dropout: float):
        super().__init__()
        padding = dilation * (kernel_size - 1) // 2
        self.norm = nn.LayerNorm(d_model)
        self.conv = nn.Conv1d(d_model, d_model, kernel_size, padding=padding, dilation=dilation)
        self.act = nn.GELU()
        self.drop = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        h = self.norm(x).transpose(1, 2)
        h = self.act(self.conv(h)).transpose(1, 2)
        return (x + self.drop(h)) * mask.unsqueeze(-1)


class TransformerBlock(nn.Module):
    """Pre-norm self-attention block; built individually so ZeRO-3 can partition each one."""

    def __init__(self, d_model: int, n_heads: int, ffn_multiplier: int, dropout: float):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(
            d_model,
            n_heads,
            dim_feedforward=d_model * ffn_multiplier,
            dropout=dropout,
            batch_first=True,
            norm_first=True,
            activation="gelu",
        )

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        if not self._drops_attention_on_cpu(x):
            return self.layer(x, src_key_padding_mask=~mask)
        return self.forward_cheap_dropout(x, mask)

    def forward_cheap_dropout(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """The layer's pre-norm forward, its attention's dropout drawn the cheap way."""
        layer = self.layer
        x = x + layer.dropout1(self._self_attention(layer.norm1(x), mask))
        feed_forward = layer.linear2(layer.dropout(layer.activation(layer.linear1(layer.norm2(x)))))
        return x + layer.dropout2(feed_forward)

    def _drops_attention_on_cpu(self, x: torch.Tensor) -> bool:
        """Training on CPU with attention dropout: the layer's own attention would draw it one
        random number per weight (models/dropout_attention.py). Not under ZeRO-3, which gathers
        the attention's weights only for its own forward."""
        attention = self.layer.self_attn
        partitioned = hasattr(attention.in_proj_weight, "ds_id")
        return self.training and x.device.type == "cpu" and attention.dropout > 0 and not partitioned

    def _self_attention(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """nn.MultiheadAttention's maths on the same weights, its dropout drawn the cheap way."""
        attention = self.layer.self_attn
        batch, length, width = x.shape
        heads = attention.num_heads
        projected = nn.functional.linear(x, attention.in_proj_weight, attention.in_proj_bias)
        query, key, value = (
            part.view(batch, length, heads, width // heads).transpose(1, 2)
            for part in projected.chunk(3, dim=-1)
        )
        bias = additive_bias(mask[:, None, None, :], x.dtype)
        scale = 1.0 / math.sqrt(width // heads)
        out = attention_with_dropout(query, key, value, bias, attention.dropout, scale)
        return attention.out_proj(out.transpose(1, 2).reshape(batch, length, width))


class SequenceClassifier(nn.Module):
    """Embedding (+ score channels) → stack of blocks → pooled representation (+ call inputs) →
    two-class head."""

    def __init__(
        self,
        cfg: ModelSection,
        vocab_size: int,
        max_tokens: int,
        n_features: int = 0,
        n_score_channels: int = 0,
    ):
        super().__init__()
        self.arch = cfg.arch
        self.gradient_checkpointing = cfg.gradient_checkpointing
        d_model = cfg.d_model
        self.embed = nn.Embedding(vocab_size, d_model, padding_idx=0)
        self.blocks = nn.ModuleList(self._make_blocks(cfg))
        if self.arch == "transformer":
            self.position = nn.Embedding(max_tokens, d_model)
        self.score_projection = None
        if n_score_channels:  # at the scale of nn.Embedding's N(0, 1) init
            self.score_projection = ScoreProjection(n_score_channels, d_model, scale=1.0)
        self.norm = nn.LayerNorm(d_model)
        pooled = 2 * d_model if self.arch == "cnn" else d_model
        self.head = FusedHead(pooled, n_features, d_model, cfg.dropout)

    @staticmethod
    def _make_blocks(cfg: ModelSection) -> list[nn.Module]:
        if cfg.arch == "cnn":
            return [
                ConvBlock(cfg.d_model, cfg.kernel_size, 2 ** (i % 4), cfg.dropout)
                for i in range(cfg.n_layers)
            ]
        return [
            TransformerBlock(cfg.d_model, cfg.n_heads, cfg.ffn_multiplier, cfg.dropout)
            for _ in range(cfg.n_layers)
        ]

    def forward(
        self,
        ids: torch.Tensor,
        mask: torch.Tensor,
        features: torch.Tensor | None = None,
        scores: torch.Tensor | None = None,
    ) -> torch.Tensor:
        return self.head(self._pool(self.encode(ids, mask, scores), mask), features)

    def encode(
        self, ids: torch.Tensor, mask: torch.Tensor, scores: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Per-token hidden states [B, T, d_model] (what masked-LM pretraining trains)."""
        x = self.embed(ids)
        if self.score_projection is not None:
            x = x + self.score_projection(scores, mask, x.dtype)
        if self.arch == "transformer":
            positions = torch.arange(ids.shape[1], device=ids.device)
            x = x + self.position(positions).unsqueeze(0)
        x = x * mask.unsqueeze(-1)
        for block in self.blocks:
            if self.gradient_checkpointing and self.training:
                x = checkpoint(block, x, mask, use_reentrant=False)
            else:
                x = block(x, mask)
        return self.norm(x)

    @property
    def hidden_size(self) -> int:
        return self.embed.embedding_dim

    def drop_classification_head(self) -> None:
        """Keep only what `encode` uses, so no parameter goes without a gradient (DDP)."""
        del self.head

    def _pool(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        if self.arch == "transformer":
            return x[:, 0]  # the CLS token
        weights = mask.unsqueeze(-1).to(x.dtype)
        mean = (x * weights).sum(1) / weights.sum(1).clamp(min=1.0)
        masked = x.masked_fill(~mask.unsqueeze(-1), -math.inf)
        return torch.cat([mean, masked.max(1).values], dim=-1)


def build_model(
    model: ModelSection | Mapping[str, Any],
    vocab_size: int,
    max_tokens: int,
    pretrained: bool = True,
    n_features: int = 0,
    n_score_channels: int = 0,
) -> nn.Module:
    """Build the classifier described by the typed `model:` section (a plain dict, as model.json
    or a test holds it, is completed by the schema first: missing keys take its defaults, a bad
    value is an InputError naming `model.<key>`), taking `n_features` call inputs beside the
    sequence and `n_score_channels` score channels along it. For `backbone: hf`,
    pretrained=False builds the architecture without loading model.path's weights."""
    cfg = model if isinstance(model, ModelSection) else complete_typed_section("model", dict(model))
    if cfg.backbone == "hf":
        from workflow_scripts.models.hf import build_hf_classifier

        return build_hf_classifier(cfg, vocab_size, max_tokens, pretrained, n_features, n_score_channels)
    return SequenceClassifier(cfg, vocab_size, max_tokens, n_features, n_score_channels)


def count_parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())
