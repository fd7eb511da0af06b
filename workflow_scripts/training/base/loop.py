"""train_base's loop on one rank: token-budget batches of blocks, accumulation, the strategy's
engine (training/strategies: DDP, FSDP2, DeepSpeed ZeRO), the trainable-unit schedule, L2-SP,
validation after each epoch, checkpoints (training/checkpoint.py: a kill at any moment resumes to
the same weights) and stop signals (training/stop_signal.py)."""

from __future__ import annotations

import math
import resource
import time
from dataclasses import dataclass, field

import torch

from workflow_scripts.config.train import settings_digest
from workflow_scripts.config.train_base import TrainBaseSection
from workflow_scripts.io_utils import atomic_path
from workflow_scripts.source_digest import rule_code_digest
from workflow_scripts.training.base.blocks import (
    Blocks,
    blank_flanks,
    epoch_order,
    load_blocks,
    mixed_batches,
    padding_share,
)
from workflow_scripts.training.base.curves import CurveLog
from workflow_scripts.training.base.network import BaseNetwork, Start, build_network, exported_state
from workflow_scripts.training.base.objective import L2SP, position_loss, validate
from workflow_scripts.training.base.run_files import BaseRun
from workflow_scripts.training.checkpoint import (
    CheckpointManager,
    capture_rng,
    restore_rng,
    run_signature,
    save_tensors,
)
from workflow_scripts.training.distributed import DistContext
from workflow_scripts.training.resume import load_newest_checkpoint
from workflow_scripts.training.stop_signal import StopRequest, TrainingInterrupted
from workflow_scripts.training.strategies import build_engine

RULE = "train_base"


@dataclass
class Position:
    epoch: int = 0  # epochs finished
    step_in_epoch: int = 0  # optimizer steps done in the current epoch
    step: int = 0  # optimizer steps done in all
    history: list = field(default_factory=list)  # validation results, one per epoch
    epoch_cost: dict = field(default_factory=dict)  # the training steps of this epoch so far, all ranks


@dataclass
class Window:
    """Sums since the last progress record."""

    start: float = field(default_factory=time.monotonic)
    cpu_start: float = field(default_factory=time.process_time)  # this rank's process, every thread
    loss: float = 0.0
    labelled: int = 0
    inputs: int = 0
    steps: int = 0


class BaseTrainer:
    def __init__(self, run: BaseRun, section: TrainBaseSection, ctx: DistContext):
        self.run, self.section, self.ctx = run, section, ctx
        self.cfg = section.train_config(run.seed)
        self.network, self.start = build_network(section.context, run.init_weights, run.seed)
        self.network.find_unused_parameters = section.freezes()  # type: ignore[assignment]  # DDP
        self.train_blocks = load_blocks(run.data, "train", section.context)
        self.val_blocks = load_blocks(run.data, "validation", section.context)
        self.epoch_batches = [
            mixed_batches(
                self.train_blocks.lengths,
                section.token_budget,
                section.batch_mixing,
                run.seed,
                epoch,
                section.packing,
            )
            for epoch in range(section.epochs)
        ]
        self.batches = self.epoch_batches[0]
        self.micro_per_step = ctx.world_size * section.grad_accumulation
        self.steps_in_epoch = [
            math.ceil(len(batches) / self.micro_per_step) for batches in self.epoch_batches
        ]
        total = sum(self.steps_in_epoch)
        self.total_steps = min(total, section.max_steps) if section.max_steps else total
        self.l2sp = L2SP(self.network, section.l2sp)
        self.parameter_count = sum(p.numel() for p in self.network.parameters())  # before ZeRO-3 partitions
        self.engine = build_engine(self.network, ctx, self.cfg, self.total_steps, micro_batch=1)
        self.network.set_trainable(section.units_at(0))
        self.network.freeze_norms(section.batch_norm == "frozen")
        self.checkpoints = CheckpointManager(run.checkpoint_dir, ctx.is_main, ctx.barrier, self.signature())
        self.position = Position()
        resumed = self.resume()
        self.curves = CurveLog(run, ctx.is_main, section.tensorboard, self.position.step if resumed else None)

    def signature(self) -> dict:
        data = vars(self.run.data)
        inputs = {**data, "init_weights": self.run.init_weights}
        return run_signature(
            settings_digest(self.section.to_dict()),
            {"context": self.section.context},
            self.ctx.world_size,
            inputs,
            code=rule_code_digest(RULE),
            seed=self.run.seed,
        )

    def describe(self) -> str:
        padding = padding_share(self.train_blocks.lengths, self.batches, self.section.packing)
        mixing = (
            f", re-cut each epoch (batch_mixing {self.section.batch_mixing})"
            if self.section.batch_mixing
            else ""
        ) + (", packed" if self.section.packing else "")
        return (
            f"{self.parameter_count:,} parameters, flank {self.section.context}, "
            f"start {self.start.kind}; {len(self.train_blocks)} train / {len(self.val_blocks)} validation blocks, "
            f"{len(self.batches)} batches of ≤ {self.section.token_budget:,} nt ({padding:.1%} padding{mixing}); "
            f"world size {self.ctx.world_size}, device {self.ctx.device.type}, backend {self.ctx.backend}; "
            f"strategy {self.engine.describe()}; {self.total_steps} optimizer steps"
        )

    # ---- the loop ---------------------------------------------------------------------------
    def train(self) -> Position:
        StopRequest.install()
        if self.position.step == 0 and not self.position.history and len(self.val_blocks):
            self.record_validation(0)  # the start weights: where the learning curve begins
        while self.position.epoch < self.section.epochs and not self.at_max_steps():
            self.train_epoch()
            if self.position.step_in_epoch == 0:  # the epoch finished
                self.after_epoch()
        if self.position.step_in_epoch:  # cut by max_steps within an epoch: its cost so far
            self.epoch_done(partial=True)
        return self.position

    def at_max_steps(self) -> bool:
        return self.section.max_steps is not None and self.position.step >= self.section.max_steps

    def train_epoch(self) -> None:
        epoch = self.position.epoch
        self.network.set_trainable(self.section.units_at(epoch))
        self.engine.model.train()
        self.network.train()  # frozen units back to eval (DeepSpeed/DDP wrappers call train on all)
        order = epoch_order(self.epoch_batches[epoch], self.run.seed, epoch, self.micro_per_step)
        self.train_blocks.blank_flanks = blank_flanks(
            len(self.train_blocks), self.section.flank_n, self.run.seed, epoch
        )
        steps = self.steps_in_epoch[epoch]
        window = Window()
        for step in range(self.position.step_in_epoch, steps):
            first = step * self.micro_per_step
            mine = [
                order[first + micro * self.ctx.world_size + self.ctx.rank]
                for micro in range(self.section.grad_accumulation)
            ]
            self.optimizer_step(mine, window)
            self.position.step += 1
            self.position.step_in_epoch = step + 1
            end, cut = step + 1 == steps, self.at_max_steps()
            if self.position.step % self.section.log_every_steps == 0 or end or cut:
                self.log(window)
                window = Window()
                self.maybe_stop()
            if self.position.step % self.section.checkpoint_every_steps == 0:
                self.save()
            if cut and not end:
                return
        self.position.epoch += 1
        self.position.step_in_epoch = 0

    def optimizer_step(self, group: list[list[int]], window: Window) -> None:
        for index, indices in enumerate(group):
            if self.section.packing:
                x, y, spans = self.train_blocks.packed(indices)
            else:
                (x, y), spans = self.train_blocks.batch(indices), None
            window.inputs += x.shape[0] * x.shape[2]
            window.labelled += int((y >= 0).sum())
            x, y = x.to(self.ctx.device, non_blocking=True), y.to(self.ctx.device, non_blocking=True)
            with self.engine.autocast():
                logits = self.engine.model(x, spans)
            loss = position_loss(logits, y, self.section.loss, self.section.focal_gamma)
            penalty = self.l2sp.penalty(self.network)
            total = loss if penalty is None else loss + penalty
            self.engine.backward(total / len(group), sync=index == len(group) - 1)
            window.loss += float(loss.detach()) / len(group)
        self.engine.clip_and_step()
        window.steps += 1

    def log(self, window: Window) -> None:
        seconds = max(time.monotonic() - window.start, 1e-9)
        cpu = time.process_time() - window.cpu_start
        loss, labelled, inputs, cpu = self.ctx.all_reduce_sum(
            [window.loss, float(window.labelled), float(window.inputs), cpu]
        )
        cost = self.position.epoch_cost
        for key, value in (
            ("labelled_nt", labelled),
            ("input_nt", inputs),
            ("cpu_s", cpu),
            ("wall_s", seconds),
        ):
            cost[key] = cost.get(key, 0) + value
        if not math.isfinite(loss):
            raise FloatingPointError(
                f"loss is {loss} at step {self.position.step}; lower train_base.lr or use fp32"
            )
        self.curves.train(
            {
                "epoch": self.position.epoch + 1,
                "step": self.position.step,
                "loss": loss / (self.ctx.world_size * max(window.steps, 1)),
                "lr": self.engine.last_lr(),
                "labelled_nt_per_s": labelled / seconds,
                "input_nt_per_s": inputs / seconds,
                "labelled_nt_per_cpu_s": labelled / max(cpu, 1e-9),
                "step_s": seconds / max(window.steps, 1),
                "trainable_units": self.section.units_at(self.position.epoch) or self.network.units,
            },
            self.total_steps,
        )

    def after_epoch(self) -> None:
        if len(self.val_blocks):
            self.record_validation(self.position.epoch)
        self.epoch_done()
        self.save()

    def record_validation(self, epoch: int) -> None:
        """Collective: validation of the weights as they are now, after `epoch` epochs (0: the start)."""
        module = self.engine.eval_model()
        budget, blocks = self.section.token_budget, self.section.val_max_blocks
        result = validate(module, self.val_blocks, self.ctx, budget, blocks, self.engine.autocast)
        self.network.train()
        record = {"epoch": epoch, "step": self.position.step, **result}
        self.position.history.append(record)
        self.curves.validation(record)

    def epoch_done(self, partial: bool = False) -> None:
        """Collective: the epoch's training cost (a record of kind epoch; peak RSS summed over the
        ranks) and its weights in OpenSpliceAI's format (run_dir/epochs/), for learning curves."""
        epoch = self.position.epoch + (1 if partial else 0)  # 1-based
        peak = self.ctx.all_reduce_sum([resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024])[0]
        state = self.final_state()
        if self.ctx.is_main:
            path = self.run.epoch_model(self.section.context, epoch)
            path.parent.mkdir(parents=True, exist_ok=True)
            with atomic_path(path) as tmp:
                save_tensors(exported_state(state), tmp)
        cost = {
            key: self.position.epoch_cost.get(key, 0)
            for key in ("labelled_nt", "input_nt", "cpu_s", "wall_s")
        }
        record = {
            "epoch": epoch,
            "step": self.position.step,
            "partial": partial,
            **cost,
            "peak_rss_mib": peak,
        }
        self.curves.epoch(record)
        self.position.epoch_cost = {}

    # ---- checkpoints and signals ------------------------------------------------------------
    def save(self):
        state = {
            **self.engine.extra_state(),
            "position": vars(self.position).copy(),
            "rng_per_rank": self.ctx.gather_objects(capture_rng()),
        }
        return self.checkpoints.save(self.position.step, state, self.engine.save)

    def resume(self) -> bool:
        state = load_newest_checkpoint(self.checkpoints, self.engine, self.ctx)
        if state is None:
            return False
        self.engine.load_extra_state(state)
        self.position = Position(**state["position"])
        restore_rng(state["rng_per_rank"][self.ctx.rank])
        if self.ctx.is_main:
            print(
                f"resuming from step {self.position.step} (epoch {self.position.epoch + 1}; {state['path']})",
                flush=True,
            )
        return True

    def maybe_stop(self) -> None:
        signum = StopRequest.on_any_rank(self.ctx)
        if signum:
            saved = self.save()
            raise TrainingInterrupted(signum, self.position.step, str(saved))

    def final_state(self) -> dict[str, torch.Tensor]:
        """Collective: the whole model, fp32 on the CPU (complete on rank 0)."""
        return self.engine.full_state_dict()


__all__ = ["BaseTrainer", "BaseNetwork", "Blocks", "Start"]
