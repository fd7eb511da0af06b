"""Run one peer's command and watch it from outside, the same way for every peer.

Every POLL_S the watcher reads each rank's peak resident memory (VmHWM in /proc/PID/status, the
kernel's high-water mark, so a sample only misses the last POLL_S of a rank's life) and, where
given, the new lines of a JSONL step log, stamped with the wall-clock time they appeared.
Ranks are the launched torchrun's children that carry a RANK in their environment.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

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

    @property
    def wall_s(self) -> float:
        return self.exited - self.launched


def peak_rss_mb(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


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


def watch(command: list[str], log: Path, step_log: Path | None = None, env: dict | None = None) -> Watched:
    """Run `command` (stdout and stderr to `log`) to its end, polling every POLL_S."""
    tail, ranks = StepLogTail(step_log), {}
    with log.open("w") as handle:
        watched = Watched(launched=time.time())
        child = subprocess.Popen(
            command, stdout=handle, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})}
        )
        root = psutil.Process(child.pid)
        while child.poll() is None:
            rank_processes(root, ranks)
            for rank, process in ranks.items():
                peak = peak_rss_mb(process.pid)
                if peak is not None:
                    watched.peak_rss_mb[rank] = max(peak, watched.peak_rss_mb.get(rank, 0.0))
            now = time.time()
            watched.records += [(now, record) for record in tail.new_records()]
            time.sleep(POLL_S)
        watched.exited = time.time()
        watched.returncode = child.returncode
    watched.records += [(watched.exited, record) for record in tail.new_records()]
    return watched
