"""Hugging Face backbones (`model.backbone: hf`), offline: a local directory or a cached hub name.

The classifier wraps `AutoModelForSequenceClassification` (num_labels=2) behind the built-in
model's call signature, `model(ids, mask[, features[, scores]]) -> logits [B, 2]` (score channels:
models/hf_score_channels.py), and exposes its transformer layers
as `blocks` so FSDP shards one unit per layer. `HFTokenizer` gives an `AutoTokenizer` the
interface of `NucleotideTokenizer` (encode_batch, token counts, to_dict).

transformers and tokenizers are an optional extra (requirements-hf.txt); nothing here touches the
network (models/hf_offline.py loads local files only).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch import nn

from workflow_scripts.config.types import ModelSection
from workflow_scripts.errors import InputError
from workflow_scripts.models import hf_attention
from workflow_scripts.models.call_inputs import FusedHead
from workflow_scripts.models.hf_offline import (
    check_encoder_loaded,
    load_offline,
    materialise_plain_tensors,
    require_transformers,
)
from workflow_scripts.models.hf_score_channels import score_projection, scores_added

TOKEN_COUNT_CHUNK = 4096


class HFTokenizer:
    """An AutoTokenizer with NucleotideTokenizer's interface; token counts come from the sequences."""

    kind = "hf"
    needs_sequences = True

    def __init__(self, path: str, trust_remote_code: bool = False):
        transformers = require_transformers()
        self.path, self.trust_remote_code = str(path), bool(trust_remote_code)
        self.tokenizer = load_offline(
            transformers.AutoTokenizer, self.path, "tokenizer", trust_remote_code=self.trust_remote_code
        )
        if self.tokenizer.pad_token_id is None:
            raise InputError(self.path, "tokenizer", "has no padding token (pad_token)")
        self.pad_id = int(self.tokenizer.pad_token_id)
        self.vocab_size = len(self.tokenizer)

    def __repr__(self) -> str:
        return f"HFTokenizer({self.path!r})"

    def encode_ids(self, seqs: Sequence[str]) -> list[list[int]]:
        return self.tokenizer(
            list(seqs), add_special_tokens=True, truncation=False, return_attention_mask=False, verbose=False
        )["input_ids"]

    def sequence_token_lengths(self, seqs: Sequence[str]) -> np.ndarray:
        """Tokens per sequence, special tokens included (before any truncation)."""
        counts = []
        for start in range(0, len(seqs), TOKEN_COUNT_CHUNK):
            counts += [len(ids) for ids in self.encode_ids(seqs[start : start + TOKEN_COUNT_CHUNK])]
        return np.asarray(counts, dtype=np.int64)

    def encode_batch(
        self, seqs: Sequence[str], max_length: int | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """(ids int64 [B, T], attention_mask bool [B, T]); rows longer than max_length keep their
        first and last (special) tokens and the centre of the rest."""
        encoded = [centre_crop_ids(ids, max_length) for ids in self.encode_ids(seqs)]
        width = max((len(ids) for ids in encoded), default=0)
        ids = torch.full((len(encoded), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(encoded), width), dtype=torch.bool)
        for row, row_ids in enumerate(encoded):
            ids[row, : len(row_ids)] = torch.as_tensor(row_ids, dtype=torch.long)
            mask[row, : len(row_ids)] = True
        return ids, mask

    def to_dict(self) -> dict:
        return {"kind": self.kind, "path": self.path, "trust_remote_code": self.trust_remote_code}

    def vocabulary(self) -> dict:
        """Every token's id (added tokens too) and the padding id."""
        return {"tokens": self.tokenizer.get_vocab(), "pad": self.pad_id}


def centre_crop_ids(ids: list[int], max_length: int | None) -> list[int]:
    """Keep ids[0] and ids[-1] (CLS/SEP) and the middle of the rest, max_length ids in all."""
    if max_length is None or len(ids) <= max_length:
        return ids
    if max_length < 3:
        return ids[:max_length]
    inner = max_length - 2
    left = (len(ids) - 2 - inner) // 2 + 1
    return [ids[0], *ids[left : left + inner], ids[-1]]


def transformer_layers(model: nn.Module) -> nn.ModuleList:
    """The model's stack of transformer layers: its largest ModuleList (BERT: encoder.layer)."""
    lists = [m for m in model.modules() if isinstance(m, nn.ModuleList) and len(m) > 0]
    if not lists:
        raise ValueError(f"{type(model).__name__} has no ModuleList of layers to shard")
    return max(lists, key=lambda m: sum(p.numel() for p in m.parameters()))


class HFSequenceClassifier(nn.Module):
    """`AutoModelForSequenceClassification` called as model(ids, mask) -> logits [B, 2]. With call
    inputs (n_features > 0) the model's own head gives way to a FusedHead over the first token's
    hidden state and the call's features. With score channels their projection is added to the
    input embeddings."""

    def __init__(
        self, hf_model: nn.Module, n_features: int = 0, dropout: float = 0.0, n_score_channels: int = 0
    ):
        super().__init__()
        self.hf: Any = hf_model  # a transformers PreTrainedModel (config, base_model_prefix, ...)
        self.head: FusedHead | None = None
        if n_features:
            self.drop_classification_head()
            self.head = FusedHead(self.hidden_size, n_features, self.hidden_size, dropout)
        self.score_projection = score_projection(hf_model, n_score_channels) if n_score_channels else None

    @property
    def blocks(self) -> nn.ModuleList:  # a property: not registered twice in the state dict
        return transformer_layers(self.hf)

    def forward(
        self,
        ids: torch.Tensor,
        mask: torch.Tensor,
        features: torch.Tensor | None = None,
        scores: torch.Tensor | None = None,
    ) -> torch.Tensor:
        with scores_added(self.hf, self.score_projection, scores, mask):
            if self.head is None:
                return self.hf(input_ids=ids, attention_mask=mask.long()).logits
            return self.head(self.encode(ids, mask)[:, 0], features)

    def encode(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Per-token hidden states [B, T, hidden] of the base model (no classification head)."""
        base = getattr(self.hf, self.hf.base_model_prefix)
        # [0]: a ModelOutput's last_hidden_state, or the first item of remote code's plain tuple
        return base(input_ids=ids, attention_mask=mask.long())[0]

    @property
    def hidden_size(self) -> int:
        return int(self.hf.config.hidden_size)

    def drop_classification_head(self) -> None:
        """Keep only what `encode` uses, so no parameter goes without a gradient (DDP)."""
        base = getattr(self.hf, self.hf.base_model_prefix)
        for name, child in list(self.hf.named_children()):
            if child is not base:
                setattr(self.hf, name, None)
        if getattr(base, "pooler", None) is not None:
            base.pooler = None
        self.head = None


def model_path(model: ModelSection) -> str:
    """model.path, which backbone hf needs (config/validate.py checks it with the tokenizer)."""
    if not model.path:
        raise InputError(
            "config", "model.path", "backbone hf needs a local model directory or cached hub name"
        )
    return model.path


def hf_config(transformers, model: ModelSection):
    """The AutoConfig of model.path, made a two-class classifier (`model`: the typed model: section)."""
    trust = model.trust_remote_code
    config = load_offline(transformers.AutoConfig, model_path(model), "model.path", trust_remote_code=trust)
    shipped = next(
        (
            ref
            for key, ref in (getattr(config, "auto_map", None) or {}).items()
            if key.startswith("AutoModel")
        ),
        None,
    )
    if shipped and not trust:
        raise InputError(
            model_path(model),
            "model.trust_remote_code",
            f"the model ships its own code "
            f"({shipped}); without it transformers would build its built-in "
            f"{config.model_type!r} class and leave weights unused. Read the .py files, "
            "then set model.trust_remote_code: true",
        )
    config.num_labels = 2
    if hasattr(config, "hidden_dropout_prob"):
        config.hidden_dropout_prob = float(model.dropout)
    return config


def build_hf_classifier(
    model: ModelSection,
    vocab_size: int,
    max_tokens: int,
    pretrained: bool = True,
    n_features: int = 0,
    n_score_channels: int = 0,
) -> HFSequenceClassifier:
    """The model at model.path with a fresh two-class head. `model.init: random` (or
    pretrained=False, as evaluate does before loading the trained state dict) builds the same
    architecture without loading weights."""
    transformers = require_transformers()
    config = hf_config(transformers, model)
    load_weights = pretrained and model.init == "pretrained"
    check_fits(config, model, vocab_size, max_tokens, load_weights)
    trust = model.trust_remote_code
    auto = transformers.AutoModelForSequenceClassification
    if load_weights:
        hf_model, info = load_offline(
            auto,
            model_path(model),
            "model.path",
            config=config,
            trust_remote_code=trust,
            output_loading_info=True,
        )
        check_encoder_loaded(hf_model, info["missing_keys"], model_path(model))
        materialise_plain_tensors(hf_model, model_path(model))
    else:
        hf_model = auto.from_config(config, trust_remote_code=trust)
    choose_attention(hf_model, model, transformers)
    if model.gradient_checkpointing:
        enable_checkpointing(hf_model)
    return HFSequenceClassifier(hf_model, n_features, float(model.dropout), n_score_channels)


def choose_attention(hf_model: nn.Module, model: ModelSection, transformers) -> None:
    try:
        hf_attention.use_for(hf_model, model.hf_attention, transformers)
    except ValueError as error:  # transformers: the model's code does not offer that attention
        raise InputError(model_path(model), "model.hf_attention", str(error).splitlines()[0]) from None


def enable_checkpointing(hf_model: Any) -> None:
    """The HF model's own activation checkpointing, non-reentrant (works under DDP and FSDP)."""
    if not getattr(hf_model, "supports_gradient_checkpointing", False):
        raise InputError(
            "config",
            "model.gradient_checkpointing",
            f"{type(hf_model).__name__} does not support gradient checkpointing; set it false",
        )
    kwargs = {"use_reentrant": False}
    if hasattr(hf_model, "activation_checkpointing_enable"):  # transformers >= 5
        hf_model.activation_checkpointing_enable(kwargs)
    else:
        hf_model.gradient_checkpointing_enable(gradient_checkpointing_kwargs=kwargs)


def has_learned_positions(config) -> bool:
    """Absolute position embeddings cap the input length; ALiBi (DNABERT-2's `alibi_starting_size`)
    and relative positions do not."""
    if getattr(config, "alibi_starting_size", None) is not None:
        return False
    return getattr(config, "position_embedding_type", "absolute") == "absolute"


def check_fits(config, model: ModelSection, vocab_size: int, max_tokens: int, load_weights: bool) -> None:
    """The tokenizer's ids and bucket.max_length must fit the model's embeddings."""
    positions = getattr(config, "max_position_embeddings", None)
    if positions is not None and max_tokens > positions and has_learned_positions(config):
        raise InputError(
            "config",
            "bucket.max_length",
            f"{max_tokens} tokens exceed the model's "
            f"max_position_embeddings {positions}; lower bucket.max_length",
        )
    model_vocab = getattr(config, "vocab_size", None)
    if model_vocab is None or vocab_size <= model_vocab:
        return
    if load_weights:
        raise InputError(
            "config",
            "tokenizer",
            f"{vocab_size} token ids but the model at "
            f"{model.path} embeds {model_vocab}; use the model's own tokenizer",
        )
    config.vocab_size = vocab_size  # a randomly initialised model takes the tokenizer's vocabulary
