"""Masked-language-model pretraining: token masking, the MLM head and its training loop.

The MLM model wraps the classifier's own encoder (built-in or Hugging Face) without its
classification head, so the exported encoder state dict has the classifier's parameter names
and `train` loads it with `load_pretrained_encoder`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from workflow_scripts.training.batches import BatchCollator
from workflow_scripts.errors import InputError
from workflow_scripts.tokenization.tokenizers import CLS_ID, PAD_ID
from workflow_scripts.training.loop import Trainer

IGNORE_INDEX = -100
BACKBONE_PREFIX = "backbone."


class MaskedLanguageModel(nn.Module):
    """Encoder → (Linear, GELU, LayerNorm, Linear) → logits over the vocabulary per token."""

    def __init__(self, classifier: nn.Module, vocab_size: int):
        super().__init__()
        classifier.drop_classification_head()
        self.backbone = classifier
        hidden = classifier.hidden_size
        self.mlm_head = nn.Sequential(nn.Linear(hidden, hidden), nn.GELU(), nn.LayerNorm(hidden),
                                      nn.Linear(hidden, vocab_size))

    @property
    def blocks(self) -> nn.ModuleList:  # FSDP shards one unit per encoder layer
        return self.backbone.blocks

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.mlm_head(self.backbone.encode(ids, mask))


def special_token_ids(tokenizer) -> list[int]:
    if getattr(tokenizer, "needs_sequences", False):
        return sorted(set(tokenizer.tokenizer.all_special_ids))
    return [PAD_ID, CLS_ID]


def mask_token_id(tokenizer) -> int:
    """[MASK] for Hugging Face tokenizers; the (zero-embedded) PAD id for nucleotide k-mers."""
    if getattr(tokenizer, "needs_sequences", False) and tokenizer.tokenizer.mask_token_id is not None:
        return int(tokenizer.tokenizer.mask_token_id)
    return PAD_ID


class MaskingCollator:
    """Batches of (ids with ~mask_fraction of real tokens masked 80/10/10, mask, labels = the
    original ids at masked positions, IGNORE_INDEX elsewhere). With `seed`, masking depends only
    on the batch's indices (validation); without, it draws from torch's RNG (training)."""

    def __init__(self, base: BatchCollator, tokenizer, mask_fraction: float, seed: int | None = None):
        self.base, self.mask_fraction, self.seed = base, mask_fraction, seed
        self.special = torch.as_tensor(special_token_ids(tokenizer), dtype=torch.long)
        self.mask_id = mask_token_id(tokenizer)
        ordinary = np.setdiff1d(np.arange(tokenizer.vocab_size), self.special.numpy())
        self.ordinary = torch.as_tensor(ordinary, dtype=torch.long)

    def __call__(self, indices: list[int]) -> dict[str, torch.Tensor]:
        ids, mask = self.base.encode(indices)
        generator = None
        if self.seed is not None:
            generator = torch.Generator().manual_seed(self.seed + int(np.sum(indices)))
        masked, labels = self.mask_tokens(ids, mask, generator)
        return {"ids": masked, "mask": mask, "labels": labels, "index": torch.as_tensor(indices)}

    def mask_tokens(self, ids: torch.Tensor, mask: torch.Tensor, generator=None):
        candidates = mask & ~torch.isin(ids, self.special)
        chosen = candidates & (torch.rand(ids.shape, generator=generator) < self.mask_fraction)
        if not chosen.any() and candidates.any():  # every batch teaches something
            chosen.view(-1)[candidates.view(-1).nonzero()[0]] = True
        labels = torch.where(chosen, ids, torch.full_like(ids, IGNORE_INDEX))
        roll = torch.rand(ids.shape, generator=generator)
        masked = torch.where(chosen & (roll < 0.8), torch.full_like(ids, self.mask_id), ids)
        replace = chosen & (roll >= 0.8) & (roll < 0.9)
        random_ids = self.ordinary[torch.randint(len(self.ordinary), ids.shape, generator=generator)]
        return torch.where(replace, random_ids, masked), labels


def mlm_loss(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    return F.cross_entropy(logits.float().flatten(0, 1), labels.flatten(), ignore_index=IGNORE_INDEX)


class MaskedLMTrainer(Trainer):
    """The training loop of `train` with the MLM loss; validation reports masked-token loss and
    accuracy (val_roc_auc is None)."""

    def _forward_loss(self, batch: dict) -> torch.Tensor:
        with self.engine.autocast():
            logits = self.engine.model(batch["ids"], batch["mask"])
        return mlm_loss(logits, batch["labels"])

    @torch.no_grad()
    def validate(self) -> dict:
        module = self.engine.eval_model()
        module.eval()
        loss_sum, correct, count = 0.0, 0.0, 0.0
        for indices, keep in self._padded_val_batches():
            batch = self._to_device(self.val_collator(indices))
            with self.engine.autocast():
                logits = module(batch["ids"], batch["mask"]).float()
            if keep:
                scored = batch["labels"] != IGNORE_INDEX
                loss_sum += float(mlm_loss(logits, batch["labels"])) * int(scored.sum())
                correct += float((logits.argmax(-1)[scored] == batch["labels"][scored]).sum())
                count += float(scored.sum())
        module.train()
        loss_sum, correct, count = self.ctx.all_reduce_sum([loss_sum, correct, count])
        return {"val_loss": loss_sum / max(count, 1.0), "val_accuracy": correct / max(count, 1.0),
                "val_roc_auc": None}


def encoder_state(mlm_state: dict) -> dict:
    """The backbone's tensors, named as in the classifier (what `train` initialises from)."""
    return {key.removeprefix(BACKBONE_PREFIX): value for key, value in mlm_state.items()
            if key.startswith(BACKBONE_PREFIX)}


def load_pretrained_encoder(model: nn.Module, path: str | Path) -> tuple[int, list[str]]:
    """Copy the pretrained encoder tensors into `model`; returns (tensors loaded, keys left as
    initialised, i.e. the classification head)."""
    state = torch.load(path, map_location="cpu", weights_only=True)
    try:
        result = model.load_state_dict(state, strict=False)
    except RuntimeError as error:
        raise InputError(path, "encoder", "does not fit the model (was it pretrained with another "
                         f"model: config?): {str(error).splitlines()[1:2]}") from None
    if result.unexpected_keys:
        raise InputError(path, "encoder", f"holds tensors the model lacks: {result.unexpected_keys[:3]}")
    return len(state), list(result.missing_keys)
