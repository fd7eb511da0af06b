"""The `train_base:` config section typed (the schema holds every default and description), and
the TrainConfig its runs hand the training strategies (training/strategies: same optimizer,
schedule, precision and ZeRO rules as `train`)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from workflow_scripts.config.train import TrainConfig
from workflow_scripts.errors import InputError

ALL = "all"
PATH_KEYS = ("init_weights",)  # declared inputs of the job, never in its --config


@dataclass(frozen=True, kw_only=True)
class TrainBaseSection:
    enabled: bool
    init_weights: str | None  # a path: the job's --init-weights input
    context: int
    seeds: list[int]
    strategy: str
    zero_stage: int | str
    precision: str
    epochs: int
    max_steps: int | None
    lr: float
    weight_decay: float
    adam_beta2: float
    decay_all_parameters: bool
    warmup_fraction: float
    min_lr_ratio: float
    grad_clip: float
    grad_accumulation: int
    token_budget: int
    batch_mixing: float
    packing: bool
    flank_n: float
    trainable_units: list[int | str]
    l2sp: float
    batch_norm: str
    loss: str
    focal_gamma: float
    val_max_blocks: int
    export: str  # last, best_val_loss or best_val_auprc
    checkpoint_every_steps: int
    log_every_steps: int
    tensorboard: bool

    @classmethod
    def from_completed(cls, completed: dict[str, Any]) -> TrainBaseSection:
        unknown = sorted(set(completed) - {f.name for f in dataclasses.fields(cls)})
        if unknown:
            raise TypeError(f"TrainBaseSection has no field {unknown[0]!r}: is the schema's key new?")
        values: dict[str, Any] = {f.name: completed.get(f.name) for f in dataclasses.fields(cls)}
        return cls(**values)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def to_completed(self) -> dict[str, Any]:
        return {key: value for key, value in self.to_dict().items() if value is not None}

    def units_at(self, epoch: int) -> int:
        """Residual units that train in `epoch` (0-based; 0 = all): the schedule's entry, the last
        one for later epochs."""
        entry = self.trainable_units[min(epoch, len(self.trainable_units) - 1)]
        return 0 if entry == ALL else int(entry)

    def freezes(self) -> bool:
        return any(entry != ALL for entry in self.trainable_units)

    def check(self) -> None:
        """What the schema cannot say: the schedule's strings, the strategies that freeze and pull."""
        for entry in self.trainable_units:
            if isinstance(entry, str) and entry != ALL:
                raise InputError("config", "train_base.trainable_units", f"{entry!r}: all or a count")
        sharded = self.strategy == "fsdp" or (self.strategy == "deepspeed" and str(self.zero_stage) == "3")
        if sharded and (self.freezes() or self.l2sp > 0):
            raise InputError(
                "config",
                "train_base.strategy",
                f"{self.strategy} shards the weights: trainable_units and l2sp need ddp or deepspeed ZeRO-0/1/2",
            )
        if self.strategy == "deepspeed" and self.freezes():
            raise InputError("config", "train_base.trainable_units", "freezing units needs strategy ddp")

    def train_config(self, seed: int) -> TrainConfig:
        """The TrainConfig the strategies take (training/strategies/base.Engine)."""
        return TrainConfig(
            strategy=self.strategy,
            epochs=self.epochs,
            lr=self.lr,
            lr_scaling="none",
            weight_decay=self.weight_decay,
            adam_beta2=self.adam_beta2,
            decay_all_parameters=self.decay_all_parameters,
            warmup_fraction=self.warmup_fraction,
            min_lr_ratio=self.min_lr_ratio,
            grad_clip=self.grad_clip,
            grad_accumulation=self.grad_accumulation,
            precision=self.precision,
            seed=seed,
            class_weight="none",
            select_epoch_by="val_loss",
            patience=0,
            checkpoint_every_steps=self.checkpoint_every_steps,
            log_every_steps=self.log_every_steps,
            max_steps=self.max_steps,
            zero_stage="auto" if self.zero_stage == "auto" else int(self.zero_stage),
            offload_optimizer=False,
            offload_params=False,
            overlap_comm=True,
            deepspeed_bucket_elements=50_000_000,
            deepspeed_config=None,
            tensorboard=False,
        )
