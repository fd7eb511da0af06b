"""The `train` objective: tell the base model's errors (label 1) from its correct calls (label 0)."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from workflow_scripts.config.train import TrainConfig
from workflow_scripts.errors import InputError
from workflow_scripts.evaluation.metrics import binary_metrics
from workflow_scripts.models.builtin import build_model
from workflow_scripts.models.pretrained_encoder import load_pretrained_encoder
from workflow_scripts.training.batches import BatchCollator, load_split
from workflow_scripts.training.objectives.base import Objective

PROBABILITY_EPS = 1e-7  # validation log loss clips probabilities away from 0 and 1


def classification_loss(logits: torch.Tensor, batch: dict) -> torch.Tensor:
    return F.cross_entropy(logits.float(), batch["labels"])


def log_loss(labels: np.ndarray, probs: np.ndarray) -> float:
    clipped = np.clip(probs, PROBABILITY_EPS, 1 - PROBABILITY_EPS)
    return float(-np.mean(labels * np.log(clipped) + (1 - labels) * np.log(1 - clipped)))


class Classification(Objective):
    name = "classification"
    rule = "train"

    def build_train_config(self, sections):
        return TrainConfig.from_section(sections.get("train", {}))

    def title(self) -> str:
        return "training"

    def load_data(self, spec, summary, tokenizer):
        train, val = (load_split(spec.windows, spec.manifest, split) for split in ("train", "val"))
        if len(train) == 0:
            raise InputError(spec.manifest, "split", "no rows in the train split")
        return train, val

    def build_model(self, spec, vocab_size, max_tokens, ctx):
        model = build_model(self.model_cfg, vocab_size, max_tokens)
        if spec.init_encoder:  # the pretrained encoder; the classification head stays fresh
            loaded, fresh = load_pretrained_encoder(model, spec.init_encoder)
            if ctx.is_main:
                print(
                    f"initialised {loaded} encoder tensors from {spec.init_encoder}; "
                    f"{len(fresh)} fresh (head)",
                    flush=True,
                )
        return model

    def collators(self, train, val, tokenizer, max_tokens):
        return BatchCollator(train, tokenizer, max_tokens), BatchCollator(val, tokenizer, max_tokens)

    def resume_key(self, spec):
        return {"encoder": spec.init_encoder}, {}

    def loss(self, logits, batch):
        return classification_loss(logits, batch)

    def score_batch(self, logits, batch):
        return batch["labels"].cpu().numpy(), torch.softmax(logits.float(), -1)[:, 1].cpu().numpy()

    def summarise(self, scores, ctx):
        """Loss, accuracy and ROC-AUC over the whole validation split (every rank's windows)."""
        local = (
            np.concatenate([labels for labels, _ in scores] or [np.zeros(0)]),
            np.concatenate([probs for _, probs in scores] or [np.zeros(0)]),
        )
        gathered = ctx.gather_objects(local)
        labels = np.concatenate([part[0] for part in gathered]).astype(int)
        probs = np.concatenate([part[1] for part in gathered]).astype(float)
        metrics = binary_metrics(labels, probs)
        return {
            "val_loss": log_loss(labels, probs),
            "val_accuracy": metrics["accuracy"],
            "val_roc_auc": metrics["roc_auc"],
        }

    def describe(self, tokenizer, max_tokens):
        return {"model": self.model_cfg, "tokenizer": tokenizer.to_dict(), "max_tokens": max_tokens}
