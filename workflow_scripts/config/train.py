"""The `train:` config section as a typed dataclass, built from the section the schema completed.

The schema (config/config.schema.yaml) holds every default, type and range; this class adds the
rules between keys that a schema cannot say (offload needs a ZeRO stage that has it).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass
from typing import Any

from workflow_scripts.config.sections import complete_section
from workflow_scripts.errors import InputError

LOGGING_KEYS = ("checkpoint_every_steps", "log_every_steps", "tensorboard")  # change no result


def settings_digest(settings: dict) -> str:
    """sha256 of a training section less its logging keys: what a checkpoint's run must share
    (training/checkpoint.py: run_signature)."""
    kept = {key: value for key, value in settings.items() if key not in LOGGING_KEYS}
    return hashlib.sha256(json.dumps(kept, sort_keys=True).encode()).hexdigest()


@dataclass(frozen=True)
class LoopSettings:
    """What the training loop reads of `train:` (training/loop.py)."""

    epochs: int
    grad_accumulation: int
    max_steps: int | None
    patience: int
    checkpoint_every_steps: int
    log_every_steps: int
    seed: int


@dataclass(frozen=True)
class ObjectiveSettings:
    """What an objective reads of `train:` (training/objectives)."""

    seed: int
    class_weight: str
    select_epoch_by: str


@dataclass(kw_only=True)
class TrainConfig:
    """Every field is documented in config/config.schema.yaml and docs/strategies.md."""

    strategy: str
    epochs: int
    lr: float
    lr_scaling: str  # linear: lr × world size
    weight_decay: float
    adam_beta2: float  # AdamW betas (0.9, adam_beta2)
    decay_all_parameters: bool  # false: weight matrices only
    warmup_fraction: float
    min_lr_ratio: float
    grad_clip: float
    grad_accumulation: int
    precision: str
    seed: int
    class_weight: str  # balanced | none
    select_epoch_by: str  # val_roc_auc | val_loss
    patience: int  # 0: no early stop
    checkpoint_every_steps: int
    log_every_steps: int
    max_steps: int | None  # optional in the schema: None = the epochs decide
    zero_stage: int | str  # deepspeed only
    offload_optimizer: bool  # deepspeed ZeRO-1/2/3
    offload_params: bool  # deepspeed ZeRO-3; fsdp on GPU
    overlap_comm: bool  # deepspeed, GPU only
    deepspeed_bucket_elements: int  # deepspeed reduce/all-gather bucket, in elements
    deepspeed_config: str | None  # optional: a user JSON merged over the generated one
    tensorboard: bool

    def __post_init__(self) -> None:
        if isinstance(self.zero_stage, str) and self.zero_stage.isdigit():
            self.zero_stage = int(self.zero_stage)  # the schema takes "0".."3" from --config strings
        self._check_offload()

    @classmethod
    def from_section(cls, values: dict) -> TrainConfig:
        """Fill and check the section against the schema (InputError names `train.<key>`)."""
        return cls.from_completed(complete_section("train", values))

    @classmethod
    def from_completed(cls, completed: dict) -> TrainConfig:
        """The section as the schema completed it, taken as it is (no schema check again); an
        optional key without a default that is absent is None."""
        fields: dict[str, Any] = {f.name: completed.get(f.name) for f in dataclasses.fields(cls)}
        return cls(**fields)

    def _check_offload(self) -> None:
        if self.strategy != "deepspeed":
            return
        self._require(
            not self.offload_optimizer or self.zero_stage != 0,
            "offload_optimizer",
            "needs zero_stage 1, 2 or 3",
        )
        self._require(
            not self.offload_params or self.zero_stage in (3, "auto"), "offload_params", "needs zero_stage 3"
        )

    def _require(self, ok: bool, key: str, message: str) -> None:
        if not ok:
            raise InputError("config", f"train.{key}", f"{message} (got {getattr(self, key)!r})")

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def loop_settings(self) -> LoopSettings:
        return LoopSettings(
            **{field.name: getattr(self, field.name) for field in dataclasses.fields(LoopSettings)}
        )

    def objective_settings(self) -> ObjectiveSettings:
        names = (field.name for field in dataclasses.fields(ObjectiveSettings))
        return ObjectiveSettings(**{name: getattr(self, name) for name in names})

    def scaled_lr(self, world_size: int) -> float:
        """The peak learning rate after the scaling rule (linear: lr × world size)."""
        return self.lr * world_size if self.lr_scaling == "linear" else self.lr
