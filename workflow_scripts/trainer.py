"""The training loop: bucketed batches, accumulation, clipping, validation, checkpoints."""

from __future__ import annotations

import contextlib
import math
import signal
import time
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F

from workflow_scripts.checkpoint import CheckpointManager, capture_rng, restore_rng
from workflow_scripts.classification_metrics import binary_metrics
from workflow_scripts.data import BatchCollator, SplitData, sorted_batches
from workflow_scripts.distributed import DistContext, unwrap_model
from workflow_scripts.errors import InputError
from workflow_scripts.optim import build_optimizer, build_scheduler
from workflow_scripts.sampler import DistributedBucketBatchSampler
from workflow_scripts.telemetry import Progress, StepLog, memory_snapshot
from workflow_scripts.train_config import TrainConfig


class TrainingInterrupted(RuntimeError):
    """Raised after a checkpoint was saved because SIGTERM/SIGUSR1 arrived."""


@dataclass
class TrainProgress:
    epoch: int = 0
    next_batch: int = 0
    step: int = 0
    best_val_loss: float = math.inf
    best_epoch: int = -1
    history: list = field(default_factory=list)


@dataclass
class LogWindow:
    """Loss and real tokens summed since the last step-log record."""

    start: float = field(default_factory=time.monotonic)
    loss_sum: float = 0.0
    tokens: int = 0
    steps: int = 0

    def add(self, loss: float, tokens: int) -> None:
        self.loss_sum += loss
        self.tokens += tokens
        self.steps += 1


def resolve_precision(precision: str, device: torch.device) -> torch.dtype | None:
    """The autocast dtype for a `train.precision` value, or None for plain fp32."""
    if precision == "auto":
        cuda_bf16 = device.type == "cuda" and torch.cuda.is_bf16_supported()
        return torch.bfloat16 if cuda_bf16 else None
    if precision == "fp16" and device.type != "cuda":
        raise InputError("config", "train.precision", "fp16 needs a CUDA GPU; use bf16 or fp32 on CPU")
    return {"fp32": None, "bf16": torch.bfloat16, "fp16": torch.float16}[precision]


class Trainer:
    def __init__(self, cfg: TrainConfig, ctx: DistContext, model: torch.nn.Module,
                 train: SplitData, val: SplitData, collators: tuple[BatchCollator, BatchCollator],
                 batch_sizes: list[int], checkpoints: CheckpointManager, step_log_path):
        self.cfg, self.ctx, self.model = cfg, ctx, model
        self.train_data, self.val_data = train, val
        self.collator, self.val_collator = collators
        self.sampler = DistributedBucketBatchSampler(
            train.buckets, batch_sizes, ctx.world_size, ctx.rank, cfg.seed
        )
        self.total_steps = self._count_optimizer_steps()
        self.optimizer = build_optimizer(model, cfg)
        self.scheduler = build_scheduler(self.optimizer, cfg, self.total_steps)
        self.autocast_dtype = resolve_precision(cfg.precision, ctx.device)
        self.scaler = torch.amp.GradScaler("cuda", enabled=self.autocast_dtype == torch.float16)
        self.checkpoints = checkpoints
        self.progress = TrainProgress()
        self.stop_requested = False
        resumed = self._maybe_resume()
        self.step_log = StepLog(step_log_path, ctx.is_main, self.progress.step if resumed else None)
        self.bar = Progress(self.total_steps, ctx.is_main)

    def _count_optimizer_steps(self) -> int:
        per_epoch = math.ceil(len(self.sampler) / self.cfg.grad_accumulation)
        total = per_epoch * self.cfg.epochs
        return min(total, self.cfg.max_steps) if self.cfg.max_steps else total

    # ---- the loop -------------------------------------------------------------------------
    def train(self) -> TrainProgress:
        self._install_signal_handlers()
        while self.progress.epoch < self.cfg.epochs and not self._reached_max_steps():
            self._train_epoch()
            if self.progress.next_batch == 0:  # epoch finished (not cut by max_steps)
                self._validate_and_keep_best()
                self._save_checkpoint()
        return self.progress

    def _train_epoch(self) -> None:
        self.sampler.set_epoch(self.progress.epoch)
        batches = list(self.sampler)
        groups = [batches[i : i + self.cfg.grad_accumulation]
                  for i in range(0, len(batches), self.cfg.grad_accumulation)]
        start_group = self.progress.next_batch // self.cfg.grad_accumulation
        self.model.train()
        window = LogWindow()
        for group_index in range(start_group, len(groups)):
            window.add(*self._optimizer_step(groups[group_index]))
            self.progress.step += 1
            self.progress.next_batch = (group_index + 1) * self.cfg.grad_accumulation
            if self.progress.step % self.cfg.log_every_steps == 0 or group_index == len(groups) - 1:
                self._log_step(window)
                window = LogWindow()
            if self._should_stop():
                self._save_checkpoint()
                raise TrainingInterrupted(f"stopped by signal at step {self.progress.step}; checkpoint saved")
            if self.progress.step % self.cfg.checkpoint_every_steps == 0:
                self._save_checkpoint()
            if self._reached_max_steps():
                return
        self.progress.epoch += 1
        self.progress.next_batch = 0

    def _optimizer_step(self, group: list[list[int]]) -> tuple[float, int]:
        """Forward/backward over the micro-batches of one optimizer step, then step."""
        total_loss, tokens = 0.0, 0
        for position, indices in enumerate(group):
            batch = self._to_device(self.collator(indices))
            sync = position == len(group) - 1
            context = contextlib.nullcontext() if sync or not hasattr(self.model, "no_sync") else self.model.no_sync()
            with context:
                loss = self._forward_loss(batch) / len(group)
                self.scaler.scale(loss).backward()
            total_loss += loss.item()
            tokens += int(batch["mask"].sum())
        self._check_finite(total_loss)
        if self.cfg.grad_clip > 0:
            self.scaler.unscale_(self.optimizer)
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.cfg.grad_clip)
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.optimizer.zero_grad(set_to_none=True)
        self.scheduler.step()
        return total_loss, tokens

    def _forward_loss(self, batch: dict) -> torch.Tensor:
        with self._autocast():
            logits = self.model(batch["ids"], batch["mask"])
        return F.cross_entropy(logits.float(), batch["labels"])

    def _autocast(self):
        if self.autocast_dtype is None:
            return contextlib.nullcontext()
        return torch.autocast(self.ctx.device.type, dtype=self.autocast_dtype)

    def _to_device(self, batch: dict) -> dict:
        return {key: value.to(self.ctx.device, non_blocking=True) for key, value in batch.items()}

    def _check_finite(self, loss: float) -> None:
        if not math.isfinite(loss):
            raise FloatingPointError(
                f"rank {self.ctx.rank}: loss is {loss} at step {self.progress.step + 1} "
                f"(epoch {self.progress.epoch + 1}); lower train.lr or use fp32"
            )

    def _reached_max_steps(self) -> bool:
        return self.cfg.max_steps is not None and self.progress.step >= self.cfg.max_steps

    # ---- metrics --------------------------------------------------------------------------
    def _log_step(self, window: "LogWindow") -> None:
        seconds = time.monotonic() - window.start
        total_loss, total_tokens = self.ctx.all_reduce_sum([window.loss_sum, float(window.tokens)])
        record = {
            "kind": "train",
            "epoch": self.progress.epoch + 1,
            "step": self.progress.step,
            "loss": total_loss / (self.ctx.world_size * max(window.steps, 1)),
            "lr": self.scheduler.get_last_lr()[0],
            "tokens_per_s": total_tokens / max(seconds, 1e-9),
            **memory_snapshot(self.ctx.device),
        }
        self.step_log.write(record)
        self.bar.update(self.progress.step, record["epoch"], record)

    def _validate_and_keep_best(self) -> None:
        if len(self.val_data) == 0:  # nothing to choose by: the last epoch is the best
            self.progress.best_epoch = self.progress.epoch
            self.checkpoints.save_best(unwrap_model(self.model).state_dict())
            return
        result = self.validate()
        record = {"kind": "val", "epoch": self.progress.epoch, "step": self.progress.step, **result}
        self.step_log.write(record)
        self.progress.history.append(record)
        if self.ctx.is_main:
            print(f"validation after epoch {self.progress.epoch}: loss {result['val_loss']:.4f} "
                  f"accuracy {result['val_accuracy']:.4f} roc_auc {result['val_roc_auc']}", flush=True)
        if result["val_loss"] < self.progress.best_val_loss:
            self.progress.best_val_loss = result["val_loss"]
            self.progress.best_epoch = self.progress.epoch
            self.checkpoints.save_best(unwrap_model(self.model).state_dict())

    @torch.no_grad()
    def validate(self) -> dict:
        """Loss, accuracy and ROC-AUC on the validation split, combined across ranks."""
        module = unwrap_model(self.model)  # no collectives inside forward
        module.eval()
        labels, probs = [], []
        for indices in sorted_batches(self.val_data, 256, self.ctx.rank, self.ctx.world_size):
            batch = self._to_device(self.val_collator(indices))
            with self._autocast():
                logits = module(batch["ids"], batch["mask"]).float()
            probs.append(torch.softmax(logits, -1)[:, 1].cpu().numpy())
            labels.append(batch["labels"].cpu().numpy())
        module.train()
        local = (np.concatenate(labels or [np.zeros(0)]), np.concatenate(probs or [np.zeros(0)]))
        gathered = self.ctx.gather_objects(local)
        all_labels = np.concatenate([g[0] for g in gathered]).astype(int)
        all_probs = np.concatenate([g[1] for g in gathered]).astype(float)
        metrics = binary_metrics(all_labels, all_probs)
        eps = 1e-7
        clipped = np.clip(all_probs, eps, 1 - eps)
        loss = -np.mean(all_labels * np.log(clipped) + (1 - all_labels) * np.log(1 - clipped))
        return {"val_loss": float(loss), "val_accuracy": metrics["accuracy"], "val_roc_auc": metrics["roc_auc"]}

    # ---- checkpoints and signals ----------------------------------------------------------
    def state_dict(self) -> dict:
        return {
            "model": unwrap_model(self.model).state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict(),
            "scaler": self.scaler.state_dict(),
            "progress": vars(self.progress).copy(),
            "rng_per_rank": self.ctx.gather_objects(capture_rng()),
        }

    def _save_checkpoint(self) -> None:
        self.checkpoints.save(self.state_dict(), self.progress.step)
        self.ctx.barrier()

    def _maybe_resume(self) -> bool:
        state = self.checkpoints.load_latest()
        if state is None:
            return False
        unwrap_model(self.model).load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        self.scaler.load_state_dict(state["scaler"])
        self.progress = TrainProgress(**state["progress"])
        restore_rng(state["rng_per_rank"][self.ctx.rank])
        if self.ctx.is_main:
            print(f"resuming from checkpoint at step {self.progress.step} "
                  f"(epoch {self.progress.epoch + 1}, batch {self.progress.next_batch})", flush=True)
        return True

    def _install_signal_handlers(self) -> None:
        def request_stop(signum, frame):
            self.stop_requested = True

        for signum in (signal.SIGTERM, signal.SIGUSR1):
            signal.signal(signum, request_stop)

    def _should_stop(self) -> bool:
        (flag,) = self.ctx.all_reduce_sum([1.0 if self.stop_requested else 0.0])
        return flag > 0
