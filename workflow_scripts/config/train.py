"""The `train:` config section as a typed, checked dataclass."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field

from workflow_scripts.errors import InputError

STRATEGIES = ("ddp", "fsdp", "deepspeed")
PRECISIONS = ("auto", "fp32", "bf16", "fp16")
LR_SCALINGS = ("none", "linear")
ZERO_STAGES = ("auto", 0, 1, 2, 3)


@dataclass(kw_only=True)
class TrainConfig:
    """Every field is documented in config/config.schema.yaml and docs/strategies.md."""

    strategy: str = "ddp"
    epochs: int = 3
    lr: float = 2e-3
    lr_scaling: str = "none"  # linear: lr × world size
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
    zero_stage: int | str = "auto"  # deepspeed only
    offload_optimizer: bool = False  # deepspeed ZeRO-1/2/3
    offload_params: bool = False  # deepspeed ZeRO-3; fsdp on GPU
    overlap_comm: bool = True  # deepspeed, GPU only
    bucket_size: int = 50_000_000  # deepspeed reduce/all-gather bucket, in elements
    deepspeed_config: str | None = None  # user JSON merged over the generated one
    tensorboard: bool = False
    extra: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if isinstance(self.zero_stage, str) and self.zero_stage.isdigit():
            self.zero_stage = int(self.zero_stage)
        self._require(self.strategy in STRATEGIES, "strategy", f"must be one of {STRATEGIES}")
        self._require(self.precision in PRECISIONS, "precision", f"must be one of {PRECISIONS}")
        self._require(self.lr_scaling in LR_SCALINGS, "lr_scaling", f"must be one of {LR_SCALINGS}")
        self._require(self.zero_stage in ZERO_STAGES, "zero_stage", "must be auto, 0, 1, 2 or 3")
        self._require(self.epochs >= 1, "epochs", "must be ≥ 1")
        self._require(self.lr > 0, "lr", "must be > 0")
        self._require(0 <= self.warmup_fraction < 1, "warmup_fraction", "must be in [0, 1)")
        self._require(0 <= self.min_lr_ratio <= 1, "min_lr_ratio", "must be in [0, 1]")
        self._require(self.grad_clip >= 0, "grad_clip", "must be ≥ 0 (0 disables clipping)")
        self._require(self.grad_accumulation >= 1, "grad_accumulation", "must be ≥ 1")
        self._require(self.checkpoint_every_steps >= 1, "checkpoint_every_steps", "must be ≥ 1")
        self._require(self.max_steps is None or self.max_steps >= 1, "max_steps", "must be ≥ 1")
        self._require(self.bucket_size >= 1, "bucket_size", "must be ≥ 1")
        self._check_offload()

    def _check_offload(self) -> None:
        if self.strategy != "deepspeed":
            return
        self._require(not self.offload_optimizer or self.zero_stage != 0, "offload_optimizer",
                      "needs zero_stage 1, 2 or 3")
        self._require(not self.offload_params or self.zero_stage in (3, "auto"), "offload_params",
                      "needs zero_stage 3")

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

    def scaled_lr(self, world_size: int) -> float:
        """The peak learning rate after the scaling rule (linear: lr × world size)."""
        return self.lr * world_size if self.lr_scaling == "linear" else self.lr
