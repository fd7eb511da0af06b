"""The training loop for every objective and strategy: bucketed batches, accumulation, clipping,
validation (validation.py), checkpoints, stop signals (stop_signal.py). The objective
(training/objectives) gives the loss and the validation metrics; the engine (training/strategies)
does forward, backward and the optimizer step."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from workflow_scripts.bucketing.sampler import DistributedBucketBatchSampler
from workflow_scripts.config.train import LoopSettings
from workflow_scripts.training.batches import SplitData, model_inputs, pin_batches_for, training_batch_tokens
from workflow_scripts.training.checkpoint import CheckpointManager, capture_rng, restore_rng
from workflow_scripts.training.distributed import DistContext
from workflow_scripts.training.objectives.base import Objective
from workflow_scripts.training.resume import load_newest_checkpoint
from workflow_scripts.training.stop_signal import StopRequest, TrainingInterrupted
from workflow_scripts.training.strategies.base import Engine
from workflow_scripts.training.telemetry import MetricsSink, Progress, memory_snapshot
from workflow_scripts.training.validation import Validator


@dataclass
class TrainProgress:
    epoch: int = 0
    next_batch: int = 0
    step: int = 0
    best_val_loss: float = math.inf
    best_score: float = -math.inf  # the objective's epoch_score of the best epoch (higher is better)
    best_epoch: int = -1
    history: list = field(default_factory=list)


@dataclass
class LogWindow:
    """Loss, real tokens and windows summed over the optimizer steps since the last step-log
    record, from `first_step` on. The loss is summed where it was computed (on a GPU: on the
    device, read back once per record instead of once per step)."""

    first_step: int
    start: float = field(default_factory=time.monotonic)
    loss_sum: torch.Tensor | float = 0.0
    tokens: int = 0
    windows: int = 0
    steps: int = 0

    def add(self, loss: torch.Tensor, tokens: int, windows: int) -> None:
        self.loss_sum = self.loss_sum + loss
        self.tokens += tokens
        self.windows += windows
        self.steps += 1


def forward_loss(
    engine: Engine, loss: Callable[[torch.Tensor, dict], torch.Tensor], batch: dict
) -> torch.Tensor:
    """The model's forward pass in the engine's precision; the loss itself in fp32."""
    with engine.autocast():
        logits = engine.model(*model_inputs(batch))
    return loss(logits, batch)


class Trainer:
    """`make_engine(total_steps)` wraps the model for the strategy (see strategies); `settings`,
    what the loop reads of `train:`, drive it."""

    def __init__(
        self,
        objective: Objective,
        settings: LoopSettings,
        ctx: DistContext,
        make_engine: Callable[[int], Engine],
        train: SplitData,
        val: SplitData,
        collators: tuple,
        batch_sizes: list[int],
        checkpoints: CheckpointManager,
        metrics: MetricsSink,
        progress: Progress | None = None,
    ):
        self.objective, self.settings, self.ctx = objective, settings, ctx
        self.train_data, self.val_data = train, val
        self.collator, self.val_collator = collators
        for collator in collators:
            pin_batches_for(collator, ctx.device)
        max_tokens = getattr(self.collator, "base", self.collator).max_tokens  # MaskingCollator: base
        val_batch_tokens = training_batch_tokens(train, batch_sizes, max_tokens)
        self.validator = Validator(objective, ctx, val, self.val_collator, val_batch_tokens, max_tokens)
        self.sampler = DistributedBucketBatchSampler(
            train.buckets,
            batch_sizes,
            ctx.world_size,
            ctx.rank,
            self.settings.seed,
            token_lengths=train.token_lengths,
        )
        self.total_steps = self._count_optimizer_steps()
        self.engine = make_engine(self.total_steps)
        self.checkpoints = checkpoints
        self.progress = TrainProgress()
        resumed = self._maybe_resume()
        self.metrics = metrics
        self.metrics.open(self.progress.step if resumed else None)
        self.bar = progress or Progress(ctx.is_main)
        self.bar.start(self.total_steps, self.settings.epochs, self.progress.step)

    def _count_optimizer_steps(self) -> int:
        per_epoch = math.ceil(len(self.sampler) / self.settings.grad_accumulation)
        total = per_epoch * self.settings.epochs
        return min(total, self.settings.max_steps) if self.settings.max_steps else total

    # ---- the loop -------------------------------------------------------------------------
    def train(self) -> TrainProgress:
        StopRequest.install()  # the worker did already; a Trainer used on its own needs it too
        while self.progress.epoch < self.settings.epochs and not self._reached_max_steps():
            self._train_epoch()
            if self.progress.next_batch == 0:  # epoch finished (not cut by max_steps)
                self._validate_and_keep_best()
                self._save_checkpoint()
                if self._out_of_patience():
                    break
        return self.progress

    def _out_of_patience(self) -> bool:
        """train.patience epochs without a better validation score (0: never stop early)."""
        since_best = self.progress.epoch - self.progress.best_epoch
        stop = self.settings.patience > 0 and len(self.val_data) > 0 and since_best >= self.settings.patience
        if stop and self.ctx.is_main:
            message = (
                f"stopped early after epoch {self.progress.epoch} of {self.settings.epochs}: no better validation "
                f"{self.objective.epoch_score_name()} for {self.settings.patience} epochs (train.patience)"
            )
            print(message, flush=True)
            self.bar.say(message)  # the console too: 'N steps in 10 epochs', then 'best epoch 2'
        return stop

    def _train_epoch(self) -> None:
        self.sampler.set_epoch(self.progress.epoch)
        batches = list(self.sampler)
        groups = [
            batches[i : i + self.settings.grad_accumulation]
            for i in range(0, len(batches), self.settings.grad_accumulation)
        ]
        start_group = self.progress.next_batch // self.settings.grad_accumulation
        self.engine.model.train()
        window = LogWindow(self.progress.step + 1)
        for group_index in range(start_group, len(groups)):
            window.add(*self._optimizer_step(groups[group_index]))
            self.progress.step += 1
            self.progress.next_batch = (group_index + 1) * self.settings.grad_accumulation
            last = group_index == len(groups) - 1 or self._reached_max_steps()
            if self.progress.step % self.settings.log_every_steps == 0 or last:  # the last step always
                self._log_step(window, epoch_end=last)
                window = LogWindow(self.progress.step + 1)
                self._maybe_stop()
            if self.progress.step % self.settings.checkpoint_every_steps == 0:
                self._check_finite(window)  # never save weights a non-finite loss has reached
                self._save_checkpoint()
            if self._reached_max_steps():
                return
        self.progress.epoch += 1
        self.progress.next_batch = 0

    def _optimizer_step(self, group: list[list[int]]) -> tuple[torch.Tensor, int, int]:
        """Forward/backward over the micro-batches of one optimizer step, then step. Returns
        this rank's loss (a tensor where it was computed: reading it would wait for the device),
        real tokens (counted on the host's mask) and windows."""
        total_loss, tokens, windows = torch.zeros((), device=self.ctx.device), 0, 0
        for position, indices in enumerate(group):
            host_batch = self.collator(indices)
            tokens += int(host_batch["mask"].sum())
            windows += len(indices)
            batch = self._to_device(host_batch)
            loss = forward_loss(self.engine, self.objective.loss, batch) / len(group)
            self.engine.backward(loss, sync=position == len(group) - 1)
            total_loss += loss.detach()
        self.engine.clip_and_step()
        return total_loss, tokens, windows

    def _to_device(self, batch: dict) -> dict:
        return {key: value.to(self.ctx.device, non_blocking=True) for key, value in batch.items()}

    def _check_finite(self, window: LogWindow) -> float:
        """This rank's loss summed over the window's steps; FloatingPointError if it is not
        finite. Checked at every step-log record and before every checkpoint, so a run stops
        at most train.log_every_steps steps after its loss became non-finite."""
        loss = float(window.loss_sum)
        if math.isfinite(loss):
            return loss
        last = self.progress.step
        where = f"at step {last} (epoch {self.progress.epoch + 1}); lower train.lr or use fp32"
        if window.first_step < last:
            where += f" (checked every train.log_every_steps: non-finite in steps {window.first_step}-{last})"
        raise FloatingPointError(f"rank {self.ctx.rank}: loss is {loss} {where}")

    def _reached_max_steps(self) -> bool:
        return self.settings.max_steps is not None and self.progress.step >= self.settings.max_steps

    # ---- metrics --------------------------------------------------------------------------
    def _log_step(self, window: LogWindow, epoch_end: bool = False) -> None:
        seconds = time.monotonic() - window.start
        total_loss, total_tokens, total_windows = self.ctx.all_reduce_sum(
            [self._check_finite(window), float(window.tokens), float(window.windows)]
        )
        record = {
            "kind": "train",
            "epoch": self.progress.epoch + 1,
            "step": self.progress.step,
            "loss": total_loss / (self.ctx.world_size * max(window.steps, 1)),
            "lr": self.engine.last_lr(),
            "tokens_per_s": total_tokens / max(seconds, 1e-9),
            "windows_per_s": total_windows / max(seconds, 1e-9),
            "step_s": seconds / max(window.steps, 1),  # wall time per optimizer step
            **memory_snapshot(self.ctx.device),
        }
        self.metrics.write(record)
        self.bar.update(self.progress.step, record["epoch"], record, force=epoch_end)

    def _validate_and_keep_best(self) -> None:
        if len(self.val_data) == 0:  # nothing to choose by: the last epoch is the best
            self.progress.best_epoch = self.progress.epoch
            self.checkpoints.save_best(self.engine.full_state_dict())
            return
        result = self.validator.validate(self.engine)
        record = {"kind": "val", "epoch": self.progress.epoch, "step": self.progress.step, **result}
        self.metrics.write(record)
        self.progress.history.append(record)
        if self.ctx.is_main:
            print(
                f"validation after epoch {self.progress.epoch}: loss {result['val_loss']:.4f} "
                f"accuracy {result['val_accuracy']:.4f} roc_auc {result['val_roc_auc']}",
                flush=True,
            )
        self.bar.epoch_done(self.progress.epoch, self.progress.step, result)
        score = self.objective.epoch_score(result)
        if score > self.progress.best_score:
            self.progress.best_score = score
            self.progress.best_val_loss = result["val_loss"]
            self.progress.best_epoch = self.progress.epoch
            self.checkpoints.save_best(self.engine.full_state_dict())  # collective

    # ---- checkpoints and signals ----------------------------------------------------------
    def trainer_state(self) -> dict:
        """Loop position, schedule and every rank's RNG (collective: gathers the RNG states)."""
        return {
            **self.engine.extra_state(),
            "progress": vars(self.progress).copy(),
            "rng_per_rank": self.ctx.gather_objects(capture_rng()),
        }

    def _save_checkpoint(self):
        return self.checkpoints.save(self.progress.step, self.trainer_state(), self.engine.save)

    def _maybe_resume(self) -> bool:
        state = load_newest_checkpoint(self.checkpoints, self.engine, self.ctx)
        if state is None:
            return False
        self.engine.load_extra_state(state)
        self.progress = TrainProgress(**state["progress"])
        restore_rng(state["rng_per_rank"][self.ctx.rank])
        if self.ctx.is_main:
            print(
                f"resuming from checkpoint at step {self.progress.step} "
                f"(epoch {self.progress.epoch + 1}, batch {self.progress.next_batch}; {state['path']})",
                flush=True,
            )
        return True

    def _maybe_stop(self) -> None:
        """Save a checkpoint and stop if any rank noted a stop signal. Checked with each
        step-log record (every train.log_every_steps steps and at an epoch's end), not every step:
        the check is a collective, a GPU sync each."""
        stop_signal = StopRequest.on_any_rank(self.ctx)
        if stop_signal:
            saved = self._save_checkpoint()
            raise TrainingInterrupted(stop_signal, self.progress.step, str(saved))
