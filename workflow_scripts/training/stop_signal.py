"""Stopping a run on a signal: the first SIGTERM, SIGUSR1 or SIGINT is noted, and the loop saves a
checkpoint and raises TrainingInterrupted once every rank has seen it."""

from __future__ import annotations

import signal
import time
from types import FrameType

from workflow_scripts.training.distributed import DistContext

STOP_SIGNALS = (signal.SIGTERM, signal.SIGUSR1, signal.SIGINT)


class TrainingInterrupted(RuntimeError):
    """Raised after a checkpoint was saved because SIGTERM, SIGUSR1 or SIGINT arrived."""

    def __init__(self, signum: int, step: int, checkpoint: str):
        self.signum, self.step = signum, step
        name = signal.Signals(signum).name
        super().__init__(f"stopped by signal {name} at step {step}; checkpoint saved in {checkpoint}")


class StopRequest:
    """The first stop signal (SIGTERM from a scheduler, SIGUSR1, SIGINT from Ctrl-C, which
    torchrun passes on) is noted, and the loop saves a checkpoint and stops at its next step-log
    record: within train.log_every_steps optimizer steps or at the epoch's end, which must fit
    well inside a scheduler's warning (the SLURM profile's --signal=TERM@300). Python's
    KeyboardInterrupt never fires. The worker installs it before anything else."""

    signum = 0

    @classmethod
    def install(cls) -> None:
        for signum in STOP_SIGNALS:
            signal.signal(signum, cls.note)

    @classmethod
    def note(cls, signum: int, frame: FrameType | None) -> None:
        cls.signum = cls.signum or signum

    @classmethod
    def arrives_within(cls, seconds: float) -> bool:
        """Whether a stop signal was noted, waiting up to `seconds` for one."""
        deadline = time.monotonic() + seconds
        while not cls.signum and time.monotonic() < deadline:
            time.sleep(0.05)
        return bool(cls.signum)

    @classmethod
    def on_any_rank(cls, ctx: DistContext) -> int:
        """A stop signal noted on any rank (0: none); collective, so every rank stops together."""
        return int(ctx.all_reduce_max(float(cls.signum)))
