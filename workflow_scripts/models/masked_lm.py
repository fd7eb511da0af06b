"""The masked-language model that pretraining trains: the classifier's own encoder (built-in or
Hugging Face) without its classification head, and an MLM head over the vocabulary.

`encoder_state` takes the encoder's tensors out of its state dict under the classifier's own
parameter names, which is what `train` starts from (models.pretrained_encoder).
"""

from __future__ import annotations

import torch
from torch import nn

from workflow_scripts.models.builtin import SequenceClassifier
from workflow_scripts.models.hf import HFSequenceClassifier

BACKBONE_PREFIX = "backbone."


class MaskedLanguageModel(nn.Module):
    """Encoder → (Linear, GELU, LayerNorm, Linear) → logits over the vocabulary per token."""

    def __init__(self, classifier: SequenceClassifier | HFSequenceClassifier, vocab_size: int):
        super().__init__()
        classifier.drop_classification_head()
        self.backbone = classifier
        hidden = classifier.hidden_size
        self.mlm_head = nn.Sequential(
            nn.Linear(hidden, hidden), nn.GELU(), nn.LayerNorm(hidden), nn.Linear(hidden, vocab_size)
        )

    @property
    def blocks(self) -> nn.ModuleList:  # FSDP shards one unit per encoder layer
        return self.backbone.blocks

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.mlm_head(self.backbone.encode(ids, mask))


def encoder_state(mlm_state: dict) -> dict:
    """The backbone's tensors, named as in the classifier (what `train` initialises from)."""
    return {
        key.removeprefix(BACKBONE_PREFIX): value
        for key, value in mlm_state.items()
        if key.startswith(BACKBONE_PREFIX)
    }
