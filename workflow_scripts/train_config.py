"""The `train:` config section as a typed, checked dataclass."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field

from workflow_scripts.errors import InputError

STRATEGIES = ("ddp",)
PRECISIONS = ("auto", "fp32", "bf16", "fp16")


@dataclass(kw_only=True)
class TrainConfig:
    strategy: str = "ddp"
    epochs: int = 3
    lr: float = 2e-3
    weight_decay: float = 0.01
    warmup_fraction: float = 0.1
    min_lr_ratio: float = 0.05
    grad_clip: float = 1.0
    grad_accumulation: int = 1
    precision: str = "auto"
    seed: int = 0
    checkpoint_every_steps: int = 200
    log_every_steps: int = 10
    max_steps: int | None = None
    extra: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._require(self.strategy in STRATEGIES, "strategy", f"must be one of {STRATEGIES}")
        self._require(self.precision in PRECISIONS, "precision", f"must be one of {PRECISIONS}")
        self._require(self.epochs >= 1, "epochs", "must be ≥ 1")
        self._require(self.lr > 0, "lr", "must be > 0")
        self._require(0 <= self.warmup_fraction < 1, "warmup_fraction", "must be in [0, 1)")
        self._require(0 <= self.min_lr_ratio <= 1, "min_lr_ratio", "must be in [0, 1]")
        self._require(self.grad_clip >= 0, "grad_clip", "must be ≥ 0 (0 disables clipping)")
        self._require(self.grad_accumulation >= 1, "grad_accumulation", "must be ≥ 1")
        self._require(self.checkpoint_every_steps >= 1, "checkpoint_every_steps", "must be ≥ 1")
        self._require(self.max_steps is None or self.max_steps >= 1, "max_steps", "must be ≥ 1")

    def _require(self, ok: bool, key: str, message: str) -> None:
        if not ok:
            raise InputError("config", f"train.{key}", f"{message} (got {getattr(self, key)!r})")

    @classmethod
    def from_dict(cls, values: dict) -> "TrainConfig":
        known = {f.name: f for f in dataclasses.fields(cls)}
        for key in values:
            if key not in known:
                raise InputError("config", f"train.{key}", "unknown key")
        return cls(**values)

    @classmethod
    def from_json(cls, text: str) -> "TrainConfig":
        return cls.from_dict(json.loads(text))

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)
