"""train_base's learning curves, from rank 0: progress lines in the log and, at most every minute
and at every epoch's end, on the console (loss, lr, labelled nt/s), steps.jsonl (one JSON object per record, kind train or val), TensorBoard
scalars where the tensorboard package is installed (else one line says they are skipped), and
curves.png at the end (loss and labelled nt/s per step, validation per epoch)."""

from __future__ import annotations

import importlib.util
import json
import sys
import time
from pathlib import Path
from typing import Any

from workflow_scripts.io_utils import atomic_path, write_text
from workflow_scripts.training.base.run_files import BaseRun
from workflow_scripts.training.telemetry import open_console

CONSOLE_EVERY_S = 60  # progress lines on the console at most this often (every one in the log)


def tensorboard_installed() -> bool:
    return importlib.util.find_spec("tensorboard") is not None


class CurveLog:
    def __init__(self, run: BaseRun, enabled: bool, tensorboard: bool, resumed_at: int | None):
        self.run, self.enabled = run, enabled
        self.label = f"train_base rs{run.seed}"
        self.console = open_console(run.console) if enabled else None
        self.writer: Any = None
        self.last_console = -float("inf")
        if not enabled:
            return
        self.keep_until(resumed_at)
        if tensorboard and tensorboard_installed():
            from torch.utils.tensorboard import SummaryWriter

            purge = None if resumed_at is None else resumed_at + 1
            self.writer = SummaryWriter(str(run.tensorboard_dir), purge_step=purge)
        elif tensorboard:
            self.say(
                "TensorBoard skipped: the tensorboard package is not installed (curves in steps.jsonl, curves.png)"
            )

    def keep_until(self, step: int | None) -> None:
        """A fresh log, or on resume the records up to the checkpoint's step."""
        path = self.run.steps
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = path.read_text().splitlines() if step is not None and path.exists() else []
        kept = [line for line in lines if line.strip() and json.loads(line)["step"] <= (step or 0)]
        write_text(path, "".join(line + "\n" for line in kept))

    def say(self, text: str, console: bool = True) -> None:
        """A line in the log; on the console too unless `console` is False."""
        if not self.enabled:
            return
        print(f"{self.label}: {text}", file=sys.stderr, flush=True)
        if console and self.console is not None:
            self.last_console = time.monotonic()
            try:
                print(f"{self.label}: {text}", file=self.console, flush=True)
            except OSError:
                self.console = None

    def write(self, record: dict) -> None:
        with self.run.steps.open("a") as handle:
            handle.write(json.dumps(record) + "\n")
        if self.writer is not None:
            for key, value in record.items():
                if key not in ("kind", "step", "epoch") and isinstance(value, (int, float)):
                    self.writer.add_scalar(f"{record['kind']}/{key}", value, record["step"])
            self.writer.flush()

    def train(self, record: dict, total_steps: int) -> None:
        if not self.enabled:
            return
        self.write({"kind": "train", **record})
        due = time.monotonic() - self.last_console >= CONSOLE_EVERY_S or record["step"] == total_steps
        self.say(
            console=due,
            text=f"epoch {record['epoch']}, step {record['step']}/{total_steps}, loss {record['loss']:.4f}, "
            f"lr {record['lr']:.2e}, {record['labelled_nt_per_s']:,.0f} labelled nt/s "
            f"({record['input_nt_per_s']:,.0f} input nt/s)",
        )

    def epoch(self, record: dict) -> None:
        """The training steps of one epoch: labelled and input nt, CPU seconds (every rank), wall seconds."""
        if not self.enabled:
            return
        self.write({"kind": "epoch", **record})
        per_cpu = record["labelled_nt"] / max(record["cpu_s"], 1e-9)
        self.say(
            f"epoch {record['epoch']} trained {record['labelled_nt']:,.0f} labelled nt in {record['wall_s']:.1f} s, "
            f"{per_cpu:,.0f} labelled nt per CPU-second, peak RSS {record['peak_rss_mib']:,.0f} MiB (all ranks)"
        )

    def validation(self, record: dict) -> None:
        if not self.enabled:
            return
        self.write({"kind": "val", **record})
        shown = ", ".join(f"{key} {value:.4f}" for key, value in record.items() if isinstance(value, float))
        when = f"after epoch {record['epoch']}" if record["epoch"] else "of the start weights"
        self.say(f"validation {when}: {shown}")

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        if self.enabled:
            plot_curves(self.run.steps, self.run.curves)


def plot_curves(steps: Path, out: Path) -> None:
    """Training loss and labelled nt/s against the step, validation loss and AUPRC per epoch."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    records = [json.loads(line) for line in steps.read_text().splitlines() if line.strip()]
    train = [r for r in records if r["kind"] == "train"]
    val = [r for r in records if r["kind"] == "val" and "val_loss" in r]
    figure, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    axes[0].plot([r["step"] for r in train], [r["loss"] for r in train], label="train")
    axes[0].plot([r["step"] for r in val], [r["val_loss"] for r in val], "o-", label="validation")
    axes[0].set(xlabel="optimizer step", ylabel="loss (labelled positions)", yscale="log")
    axes[0].legend()
    axes[1].plot([r["step"] for r in train], [r["labelled_nt_per_s"] for r in train])
    axes[1].set(xlabel="optimizer step", ylabel="labelled nt/s (all ranks)")
    for name in ("acceptor", "donor"):
        points = [(r["epoch"], r[f"{name}_auprc"]) for r in val if r.get(f"{name}_auprc") is not None]
        if points:
            axes[2].plot(*zip(*points), "o-", label=f"{name} AUPRC")
    axes[2].set(xlabel="epoch", ylabel="validation", ylim=(0, 1))
    axes[2].legend()
    figure.suptitle(f"train_base {steps.parent.name}")
    figure.tight_layout()
    with atomic_path(out) as tmp:
        figure.savefig(tmp, format="png", dpi=90)
    plt.close(figure)
