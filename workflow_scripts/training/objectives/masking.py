"""Token masking for masked-LM pretraining: which tokens are hidden, and what replaces them."""

from __future__ import annotations

import numpy as np
import torch

from workflow_scripts.tokenization.tokenizers import CLS_ID, PAD_ID
from workflow_scripts.training.batches import BatchCollator

IGNORE_INDEX = -100  # labels of tokens the loss skips (cross_entropy's ignore_index)


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
