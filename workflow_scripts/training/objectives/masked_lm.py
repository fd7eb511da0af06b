"""The `pretrain` objective: masked-LM on unlabeled windows, with the classifier's own encoder.

Its train config is the `train:` section with `pretrain:`'s epochs, lr and max_steps (made by
the pretrain rule's process, rules/pretrain.py, before launch: pretrain_train_section); the weights
it exports are the encoder's alone, under the classifier's parameter names (train starts from them).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import torch.nn.functional as F

from workflow_scripts.config.train import TrainConfig
from workflow_scripts.config.types import PretrainSection
from workflow_scripts.models.builtin import build_model
from workflow_scripts.models.masked_lm import MaskedLanguageModel, encoder_state
from workflow_scripts.training.batches import BatchCollator
from workflow_scripts.training.objectives.base import Objective
from workflow_scripts.training.objectives.masking import IGNORE_INDEX, MaskingCollator
from workflow_scripts.training.pretrain_data import unlabeled_data

VALIDATION_SEED = 1234  # validation masks depend only on the batch, so every epoch scores the same


def mlm_loss(logits, labels):
    return F.cross_entropy(logits.float().flatten(0, 1), labels.flatten(), ignore_index=IGNORE_INDEX)


def pretrain_train_section(train: TrainConfig, pretrain: PretrainSection) -> TrainConfig:
    """The train: section with pretrain:'s epochs, lr and max_steps (absent: the epochs decide)."""
    return dataclasses.replace(
        train, epochs=pretrain.epochs, lr=pretrain.lr, max_steps=pretrain.max_steps or None
    )


class MaskedLM(Objective):
    name = "masked_lm"
    rule = "pretrain"

    def __init__(self, settings, model, pretrain=None) -> None:
        if pretrain is None:
            raise ValueError("masked_lm needs the pretrain: section")
        self.pretrain: PretrainSection = pretrain
        super().__init__(settings, model)

    def title(self) -> str:
        return f"pretraining (masked LM, source {self.pretrain.source})"

    def load_data(self, spec, summary, tokenizer):
        return unlabeled_data(
            spec.windows,
            spec.manifest,
            self.pretrain,
            spec.genome_dir,
            summary,
            tokenizer,
            self.settings.seed,
        )

    def build_model(self, spec, vocab_size, max_tokens, ctx):
        return MaskedLanguageModel(build_model(self.model_section, vocab_size, max_tokens), vocab_size)

    def collators(self, train, val, tokenizer, max_tokens):
        fraction = self.pretrain.mask_fraction
        return (
            MaskingCollator(BatchCollator(train, tokenizer, max_tokens), tokenizer, fraction),
            MaskingCollator(BatchCollator(val, tokenizer, max_tokens), tokenizer, fraction, VALIDATION_SEED),
        )

    def resume_key(self, spec):
        from_genome = self.pretrain.source == "genome"
        genome_index = Path(spec.genome_dir) / "index.tsv" if from_genome and spec.genome_dir else None
        return {"genome": genome_index}, {
            "source": self.pretrain.source,
            "mask_fraction": self.pretrain.mask_fraction,
            "genome_windows": self.pretrain.genome_windows if from_genome else None,
        }

    def loss(self, logits, batch):
        return mlm_loss(logits, batch["labels"])

    def score_batch(self, logits, batch):
        """(masked-token loss sum, correct predictions, masked tokens) of this batch."""
        labels = batch["labels"]
        scored = labels != IGNORE_INDEX
        count = float(scored.sum())
        correct = float((logits.argmax(-1)[scored] == labels[scored]).sum())
        return float(mlm_loss(logits, labels)) * count, correct, count

    def summarise(self, scores, ctx):
        local = [sum(score[i] for score in scores) for i in range(3)]
        loss_sum, correct, count = ctx.all_reduce_sum([float(value) for value in local])
        return {
            "val_loss": loss_sum / max(count, 1.0),
            "val_accuracy": correct / max(count, 1.0),
            "val_roc_auc": None,
        }

    def exported_weights(self, state):
        return encoder_state(state)

    def describe(self, tokenizer, max_tokens):
        return {
            "objective": self.name,
            "source": self.pretrain.source,
            "mask_fraction": self.pretrain.mask_fraction,
        }
