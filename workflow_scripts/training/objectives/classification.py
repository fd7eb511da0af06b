"""The `train` objective: tell the base model's errors (label 1) from its correct calls (label 0)."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from workflow_scripts.data.quality import read_notes
from workflow_scripts.errors import InputError
from workflow_scripts.metrics import binary_metrics
from workflow_scripts.models.builtin import build_model
from workflow_scripts.models.call_inputs import feature_width, windows_input_columns
from workflow_scripts.models.pretrained_encoder import load_pretrained_encoder
from workflow_scripts.models.score_channels import windows_score_channels
from workflow_scripts.training.batches import BatchCollator, load_split
from workflow_scripts.training.objectives.base import Objective
from workflow_scripts.training.trained_on import trained_on

PROBABILITY_EPS = 1e-7  # validation log loss clips probabilities away from 0 and 1


def classification_loss(
    logits: torch.Tensor, batch: dict, class_weights: torch.Tensor | None = None
) -> torch.Tensor:
    weight = None if class_weights is None else class_weights.to(logits.device)
    return F.cross_entropy(logits.float(), batch["labels"], weight=weight)


def balanced_class_weights(labels: np.ndarray) -> torch.Tensor:
    """Per-class loss weights n / (2 n_class): both classes weigh the same in the loss."""
    counts = np.bincount(labels, minlength=2).astype(np.float64)
    return torch.as_tensor(len(labels) / (2 * np.maximum(counts, 1)), dtype=torch.float32)


def log_loss(labels: np.ndarray, probs: np.ndarray) -> float:
    clipped = np.clip(probs, PROBABILITY_EPS, 1 - PROBABILITY_EPS)
    return float(-np.mean(labels * np.log(clipped) + (1 - labels) * np.log(1 - clipped)))


class Classification(Objective):
    name = "classification"
    rule = "train"

    def title(self) -> str:
        return "training"

    input_columns: list[str] = []  # the call inputs the model takes (set by load_data)
    score_channels: list[str] = []  # the score channel columns it takes (set by load_data)
    windows = ""  # windows.parquet (set by load_data): model.json records its window and labels
    class_weights: torch.Tensor | None = None

    def load_data(self, spec, summary, tokenizer):
        self.windows = spec.windows
        self.input_columns = windows_input_columns(self.model_section.call_inputs, spec.windows)
        self.score_channels = windows_score_channels(self.model_section.score_channels, spec.windows)
        train, val = (
            load_split(spec.windows, spec.manifest, split, self.input_columns, self.score_channels)
            for split in ("train", "val")
        )
        if len(train) == 0:
            raise InputError(spec.manifest, "split", "no rows in the train split")
        if self.settings.class_weight == "balanced":
            self.class_weights = balanced_class_weights(train.labels)
        return train, val

    def build_model(self, spec, vocab_size, max_tokens, ctx):
        if ctx.is_main:
            print(f"call inputs beside the sequence: {', '.join(self.input_columns) or 'none'}", flush=True)
            print(
                f"score channels along the sequence: {', '.join(self.score_channels) or 'none'}", flush=True
            )
        n_features = feature_width(self.input_columns)
        model = build_model(
            self.model_section,
            vocab_size,
            max_tokens,
            n_features=n_features,
            n_score_channels=len(self.score_channels),
        )
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
        return classification_loss(logits, batch, self.class_weights)

    def epoch_score_name(self) -> str:
        return self.settings.select_epoch_by.removeprefix("val_")

    def epoch_score(self, result):
        if self.settings.select_epoch_by == "val_roc_auc" and result["val_roc_auc"] is not None:
            return float(result["val_roc_auc"])
        return -result["val_loss"]

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
        return {
            "model": self.model_section.to_completed(),
            "max_tokens": max_tokens,
            **trained_on(read_notes(self.windows), tokenizer, self.input_columns, self.score_channels),
        }
