"""Run one peer's command and watch it from outside, the same way for every peer.

Every POLL_S the watcher reads each rank's peak resident memory (VmHWM in /proc/PID/status, the
kernel's high-water mark, so a sample only misses the last POLL_S of a rank's life), the CPU
seconds the ranks have used (user + system, summed over ranks) and, where given, the new lines of
a JSONL step log, stamped with the wall-clock time they appeared. On a machine shared with other
jobs, wall-clock time depends on their load; CPU seconds over the same interval much less so.
Ranks are the launched torchrun's children that carry a RANK in their environment; the process
tree is scanned only until the expected number of ranks is found (the scan costs CPU time that
the peers, on a shared 2-core machine, would otherwise have).
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
    tail, known, cpu_s = StepLogTail(step_log), {}, {}
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
