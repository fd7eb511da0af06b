"""Run one peer's command and watch it from outside, the same way for every peer; then split its
wall time into phases (start-up, steps, validation, checkpoint, export, teardown).

Every POLL_S the watcher reads each rank's peak resident memory (VmHWM in /proc/PID/status, the
kernel's high-water mark, so a sample only misses the last POLL_S of a rank's life), the CPU
seconds the ranks have used (user + system, summed over ranks) and, where given, the new lines of
a JSONL step log, stamped with the wall-clock time they appeared. On a machine shared with other
jobs, wall-clock time depends on their load; CPU seconds over the same interval much less so.
Ranks are the launched torchrun's children that carry a RANK in their environment; the process
tree is scanned only until the expected number of ranks is found (the scan costs CPU time that
the peers, on a shared 2-core machine, would otherwise have).

errorseq's phases come from its own telemetry and outputs: the step log's records (the time each
appeared; `step_s` says when its steps began), the checkpoint folder's `latest` pointer and the
exported files' modification times. The Trainer's come from its callbacks (peers/trainer.py's
Timeline).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import psutil

POLL_S = 0.05


@dataclass
class Watched:
    """What one run showed: wall-clock launch and exit, exit code, peak RSS per rank (MiB) and the
    step log's records with the time each appeared."""

    launched: float
    exited: float = 0.0
    returncode: int = 0
    peak_rss_mb: dict[int, float] = field(default_factory=dict)
    records: list[tuple[float, dict]] = field(default_factory=list)
    cpu: list[tuple[float, float]] = field(default_factory=list)  # (time, CPU s of all ranks so far)

    @property
    def wall_s(self) -> float:
        return self.exited - self.launched

    def cpu_between(self, began: float, ended: float) -> float:
        """CPU seconds the ranks used from `began` to `ended` (wall clock), interpolated."""
        if not self.cpu:
            return float("nan")
        times, used = zip(*self.cpu)
        return float(np.interp(ended, times, used) - np.interp(began, times, used))


def peak_rss_mb(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def cpu_seconds(process: psutil.Process, last: float) -> float:
    """User + system seconds of `process` (its last reading once it has gone)."""
    try:
        times = process.cpu_times()
    except psutil.Error:
        return last
    return times.user + times.system


class StepLogTail:
    """New complete lines of a growing JSONL file."""

    def __init__(self, path: Path | None):
        self.path, self.offset = path, 0

    def new_records(self) -> list[dict]:
        if self.path is None or not self.path.exists():
            return []
        with self.path.open() as handle:
            handle.seek(self.offset)
            text = handle.read()
        complete = text[: text.rfind("\n") + 1]
        self.offset += len(complete.encode())
        return [json.loads(line) for line in complete.splitlines() if line.strip()]


def rank_processes(process: psutil.Process, known: dict[int, psutil.Process]) -> None:
    """Add the ranks among `process`'s descendants to `known` (rank → process)."""
    try:
        children = process.children(recursive=True)
    except psutil.Error:
        return
    for child in children:
        if child.pid in {p.pid for p in known.values()}:
            continue
        try:
            rank = child.environ().get("RANK")
        except psutil.Error:
            continue
        if rank is not None:
            known[int(rank)] = child


def watch(
    command: list[str], log: Path, step_log: Path | None = None, env: dict | None = None, ranks: int = 0
) -> Watched:
    """Run `command` (stdout and stderr to `log`) to its end, polling every POLL_S; `ranks`: how
    many rank processes to look for among its descendants."""
    tail = StepLogTail(step_log)
    known: dict[int, psutil.Process] = {}
    cpu_s: dict[int, float] = {}
    with log.open("w") as handle:
        watched = Watched(launched=time.time())
        child = subprocess.Popen(
            command, stdout=handle, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})}
        )
        root = psutil.Process(child.pid)
        while child.poll() is None:
            if len(known) < ranks:
                rank_processes(root, known)
            for rank, process in known.items():
                peak = peak_rss_mb(process.pid)
                if peak is not None:
                    watched.peak_rss_mb[rank] = max(peak, watched.peak_rss_mb.get(rank, 0.0))
                cpu_s[rank] = cpu_seconds(process, cpu_s.get(rank, 0.0))
            now = time.time()
            if known:
                watched.cpu.append((now, sum(cpu_s.values())))
            watched.records += [(now, record) for record in tail.new_records()]
            time.sleep(POLL_S)
        watched.exited = time.time()
        watched.returncode = child.returncode
    watched.records += [(watched.exited, record) for record in tail.new_records()]
    return watched


# ---- where each peer's time went ---------------------------------------------------------------
def errorseq_timeline(watched: Watched, run: Path) -> dict:
    """Seconds of each phase from the step log (arrival times; a train record's `step_s` times
    its steps, so its first step began arrival - steps * step_s) and the outputs' mtimes."""
    train: list = []
    val: list = []
    spans: list = []  # spans: each epoch's steps, (first began, last done)
    last_step, epoch = 0, 0
    for arrived, record in watched.records:
        if record["kind"] == "val":
            val.append((arrived, train[-1][0]))
            continue
        steps = record["step"] - last_step
        if record["epoch"] != epoch:
            spans.append([arrived - steps * record["step_s"], arrived])
            epoch = record["epoch"]
        spans[-1][1] = arrived
        train.append((arrived, steps * record["step_s"]))
        last_step = record["step"]
    starts = [began for began, _ in spans]
    saved = (run / "checkpoints" / "latest").stat().st_mtime
    exported = max((run / name).stat().st_mtime for name in ("model.pt", "model.json", "steps.jsonl"))
    ends = starts[1:] + [saved]  # a checkpoint ends where the next epoch's steps begin
    return {
        "launched_to_export_s": exported - watched.launched,
        "startup_s": starts[0] - watched.launched,
        "train_s": sum(seconds for _, seconds in train),
        "train_cpu_s": sum(watched.cpu_between(began, done) for began, done in spans),
        "validation_s": sum(done - began for done, began in val),
        "checkpoint_s": sum(end - done for end, (done, _) in zip(ends, val)),
        "export_s": exported - saved,
        "teardown_s": watched.exited - exported,
    }


def trainer_timeline(events: dict[str, list[float]], watched: Watched) -> dict:
    """Seconds of each phase from the callbacks' times: a step lasts from the end of whatever came
    before it (the previous step, a validation, a save, an epoch's start) to its on_step_end."""
    marks = sorted((t, name) for name, times in events.items() for t in times)
    train_s = train_cpu_s = validation_s = checkpoint_s = 0.0
    previous = None
    for t, name in marks:
        if name == "step_end" and previous is not None:
            train_s += t - previous
            train_cpu_s += watched.cpu_between(previous, t)
        elif name == "evaluate_end" and previous is not None:
            validation_s += t - previous
        elif name == "save_end" and previous is not None:
            checkpoint_s += t - previous
        if name in ("epoch_begin", "step_end", "evaluate_end", "save_end"):
            previous = t
    exported = events["export_end"][0]
    return {
        "launched_to_export_s": exported - watched.launched,
        "startup_s": events["epoch_begin"][0] - watched.launched,
        "train_s": train_s,
        "train_cpu_s": train_cpu_s,
        "validation_s": validation_s,
        "checkpoint_s": checkpoint_s,
        "export_s": exported - events["train_end"][0],
        "teardown_s": watched.exited - events["predict_end"][0],
    }
