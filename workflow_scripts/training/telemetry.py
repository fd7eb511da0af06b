"""Step metrics: memory use, a JSONL step log and a progress line, all from rank 0."""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from pathlib import Path
from typing import Any, TextIO

import torch

from workflow_scripts.artifacts import check_step_record
from workflow_scripts.progress import TimeLeft, duration

CONSOLE_INTERVAL_S = 300  # a console line at least this often within a long epoch
_PAGE_SIZE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def rss_mb() -> float:
    """Resident memory of this process now (peak RSS where /proc is missing)."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * _PAGE_SIZE / 2**20
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def memory_snapshot(device: torch.device) -> dict:
    snapshot: dict[str, float | None] = {"rss_mb": round(rss_mb(), 1)}
    on_gpu = device.type == "cuda"
    for key, reader in (
        ("gpu_allocated_mb", "memory_allocated"),
        ("gpu_reserved_mb", "memory_reserved"),
        ("gpu_peak_mb", "max_memory_allocated"),
    ):
        snapshot[key] = round(getattr(torch.cuda, reader)(device) / 2**20, 1) if on_gpu else None
    return snapshot


class StepLog:
    """Appends one JSON object per line; a no-op on ranks other than 0."""

    def __init__(self, path: str | os.PathLike, enabled: bool, keep_until_step: int | None = None):
        self.path = Path(path)
        self.enabled = enabled
        if enabled:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._truncate_after(keep_until_step)

    def _truncate_after(self, step: int | None) -> None:
        """On resume, drop records of steps that will be redone."""
        if step is None or not self.path.exists():
            self.path.write_text("")
            return
        kept = [
            line
            for line in self.path.read_text().splitlines()
            if line.strip() and json.loads(line).get("step", 0) <= step
        ]
        self.path.write_text("".join(line + "\n" for line in kept))

    def write(self, record: dict) -> None:
        check_step_record(record)  # the fields artifacts.py declares, on every rank
        if self.enabled:
            with self.path.open("a") as handle:
                handle.write(json.dumps(record) + "\n")


class Progress:
    """Rank 0's progress. In the log (stderr): a bar line at most every `min_interval_s`, and at
    the end of every epoch however short. On the console, where the rule gives one (Snakemake's
    own stderr, which the job's log redirection leaves out): a start line, a line per epoch and,
    within long epochs, one every CONSOLE_INTERVAL_S, with the time left at the rate of the steps
    since the first (workflow_scripts/progress.py). `clock` is time.monotonic but in tests."""

    def __init__(
        self,
        enabled: bool,
        console: TextIO | None = None,
        label: str = "training",
        min_interval_s: float = 2.0,
        clock=time.monotonic,
    ):
        self.enabled, self.console, self.label = enabled, console, label
        self.min_interval_s = min_interval_s
        self.clock = clock
        self.total, self.epochs = 1, 1
        self.started = self.last_report = self.last_console = clock()
        self.last_loss: float | None = None
        self.first_step = 0
        self.time_left = TimeLeft(1, self.started)

    def start(self, total_steps: int, epochs: int, step: int) -> None:
        self.total, self.epochs = max(total_steps, 1), epochs
        self.started = self.last_console = self.clock()
        self.first_step = step
        self.time_left = TimeLeft(self.total - step, self.started)
        resumed = f", resuming at step {step}" if step else ""
        self.say(f"{self.total} optimizer steps in {epochs} epochs{resumed}")

    def left(self, step: int) -> str:
        """', 3 min 10 s left' while steps are left; nothing once none is."""
        return f", {duration(self.time_left.seconds())} left" if step < self.total else ""

    def update(self, step: int, epoch: int, metrics: dict, force: bool = False) -> None:
        now = self.clock()
        self.time_left.record(now, step - self.first_step)
        self.last_loss = metrics["loss"]
        if self.enabled and now - self.last_console >= CONSOLE_INTERVAL_S:
            self.say(
                f"epoch {epoch}/{self.epochs}, step {step}/{self.total}, loss {metrics['loss']:.4f}"
                f"{self.left(step)}"
            )
        if not self.enabled or (not force and now - self.last_report < self.min_interval_s):
            return
        self.last_report = now
        done = int(30 * step / self.total)
        bar = "=" * done + ">" + " " * (30 - done)
        print(
            f"epoch {epoch} [{bar[:31]}] {step}/{self.total} "
            f"loss {metrics['loss']:.4f} lr {metrics['lr']:.2e} "
            f"{metrics['tokens_per_s']:,.0f} tok/s rss {metrics['rss_mb']:.0f} MB",
            file=sys.stderr,
            flush=True,
        )

    def epoch_done(self, epoch: int, step: int, validation: dict) -> None:
        """The console line of a finished epoch (`epoch` counts from 1)."""
        loss = f"loss {self.last_loss:.4f}, " if self.last_loss is not None else ""
        measured = ", ".join(
            f"{key} {value:.4f}" for key, value in validation.items() if isinstance(value, float)
        )
        self.say(f"epoch {epoch}/{self.epochs}, step {step}/{self.total}, {loss}{measured}{self.left(step)}")

    def say(self, text: str) -> None:
        """One console line, labelled with the rule and experiment, with the time since start."""
        if not (self.enabled and self.console):
            return
        elapsed = int(self.clock() - self.started)
        try:
            print(f"{self.label}: {text} [{elapsed // 60}:{elapsed % 60:02d}]", file=self.console, flush=True)
        except OSError:  # the console went away (a closed terminal): the log still has it all
            self.console = None
        self.last_console = self.clock()


def open_console(path: str | None) -> TextIO | None:
    """The console file (a terminal, a pipe, a file: appended to), or None where there is none."""
    if not path:
        return None
    try:
        return open(path, "a", buffering=1)
    except OSError:
        return None


def require_tensorboard() -> None:
    """`train.tensorboard: true` needs the tensorboard package (torch.utils.tensorboard uses it)."""
    import importlib.util

    from workflow_scripts.errors import InputError

    if importlib.util.find_spec("tensorboard") is None:
        raise InputError(
            "config",
            "train.tensorboard",
            "needs the tensorboard package (pip install tensorboard), or set it to false",
        )


class MetricsSink:
    """The step log (JSONL) and, optionally, TensorBoard scalars of the same records; rank 0 only."""

    def __init__(self, step_log_path: str | os.PathLike, enabled: bool, tensorboard_dir: str | None = None):
        self.step_log_path, self.enabled, self.tensorboard_dir = step_log_path, enabled, tensorboard_dir
        self.step_log: StepLog | None = None
        self.writer: Any = None  # a torch.utils.tensorboard SummaryWriter once opened

    @property
    def path(self) -> Path:
        return Path(self.step_log_path)

    def open(self, keep_until_step: int | None) -> None:
        self.step_log = StepLog(self.step_log_path, self.enabled, keep_until_step)
        if self.enabled and self.tensorboard_dir:
            from torch.utils.tensorboard import SummaryWriter

            self.writer = SummaryWriter(
                self.tensorboard_dir, purge_step=None if keep_until_step is None else keep_until_step + 1
            )

    def write(self, record: dict) -> None:
        if self.step_log is None:
            raise RuntimeError("MetricsSink.write before open")
        self.step_log.write(record)
        if self.writer is None:
            return
        for key, value in record.items():
            if key not in ("kind", "step", "epoch") and isinstance(value, (int, float)):
                self.writer.add_scalar(f"{record['kind']}/{key}", value, record["step"])
        self.writer.flush()

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
