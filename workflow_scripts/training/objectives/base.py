"""What a training objective decides; everything else (loop, strategies, checkpoints, step log,
export) is the same for `train` and `pretrain` (training/run.py)."""

from __future__ import annotations

import abc

import torch
from torch import nn

from workflow_scripts.config.train import ObjectiveSettings
from workflow_scripts.config.types import ModelSection, PretrainSection
from workflow_scripts.training.batches import SplitData
from workflow_scripts.training.distributed import DistContext
from workflow_scripts.training.run_spec import RunSpec


class Objective(abc.ABC):
    """One kind of training, from the typed sections it reads (config/types.py, completed by the
    schema once, in the rule's process: taken as they are) and what it reads of `train:`."""

    name: str
    rule: str  # the Snakemake rule that runs it: its code digest keys the checkpoints

    def __init__(
        self, settings: ObjectiveSettings, model: ModelSection, pretrain: PretrainSection | None = None
    ):
        self.settings = settings
        self.model_section = model

    # ---- setting up a run -------------------------------------------------------------------
    @abc.abstractmethod
    def title(self) -> str:
        """What the start line calls the run, e.g. `training`."""

    @abc.abstractmethod
    def load_data(self, spec: RunSpec, summary: dict, tokenizer) -> tuple[SplitData, SplitData]:
        """(train, val) windows."""

    @abc.abstractmethod
    def build_model(self, spec: RunSpec, vocab_size: int, max_tokens: int, ctx: DistContext) -> nn.Module:
        """The model as the loop trains it (before the strategy wraps it)."""

    @abc.abstractmethod
    def collators(self, train: SplitData, val: SplitData, tokenizer, max_tokens: int) -> tuple:
        """(train collator, val collator): indices → a batch dict with ids, mask, labels."""

    @abc.abstractmethod
    def resume_key(self, spec: RunSpec) -> tuple[dict, dict]:
        """(input files, settings) besides the train and model config that a checkpoint must
        share with this run to be resumed from."""

    # ---- the loop -----------------------------------------------------------------------------
    @abc.abstractmethod
    def loss(self, logits: torch.Tensor, batch: dict) -> torch.Tensor:
        """The training loss of one micro-batch (computed in fp32)."""

    @abc.abstractmethod
    def score_batch(self, logits: torch.Tensor, batch: dict):
        """This rank's share of the validation result for one batch (plain Python/NumPy)."""

    @abc.abstractmethod
    def summarise(self, scores: list, ctx: DistContext) -> dict:
        """Collective: val_loss, val_accuracy, val_roc_auc from every rank's `score_batch` results."""

    def epoch_score_name(self) -> str:
        return "loss"

    def epoch_score(self, result: dict) -> float:
        """How good an epoch's validation `result` is (higher is better): picks the best epoch."""
        return -result["val_loss"]

    # ---- export -------------------------------------------------------------------------------
    def exported_weights(self, state: dict) -> dict:
        """What the weights file holds, from the trained model's full state dict."""
        return state

    @abc.abstractmethod
    def describe(self, tokenizer, max_tokens: int) -> dict:
        """The objective's own fields of the run's JSON record (model.json, pretrain.json)."""
