"""A long job's progress on Snakemake's console: done of total, the rate and the time left.

A rule sends its job's output to the job's log (`> {log} 2>&1`), so Snakemake's console shows
nothing of a 40-minute job until it ends. Rules whose jobs run long also hand the job a
descriptor on Snakemake's own stderr, opened before that redirection:

    python -m workflow_scripts.rules.<rule> ... --console-fd 3 3>&2 > {log} 2>&1

The job writes everything to its log (stderr), and to that descriptor (`Console`) its first line,
which names the log to follow, then at most one progress line every CONSOLE_EVERY_S and the last
line. A job run by hand, without `--console-fd`, writes only to stderr.

The time left (`TimeLeft`) is estimated from the work done, in the unit the work costs (for
score_base_model the nucleotides the model reads, not genes or batches, whose sizes differ a
hundredfold), at the rate measured since the first piece of work ended: what comes before it
(loading models, a GPU's first kernels) would otherwise slow the estimate for the whole run.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TextIO

CONSOLE_EVERY_S = 30.0  # at most one progress line per job this often on the console
LOG_EVERY_S = 30.0  # and in the log


class Console:
    """Snakemake's console as the descriptor the rule opened (`--console-fd`); silent without one,
    and from the first write that fails (a closed terminal: the log still has everything).
    `say` writes a line; `progress` one only where `every_s` have passed since the last line,
    whichever of the job's stages wrote it. `clock` is time.monotonic but in tests."""

    def __init__(
        self,
        descriptor: int | None,
        every_s: float = CONSOLE_EVERY_S,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.descriptor = descriptor if descriptor is not None and is_open(descriptor) else None
        self.every_s, self.clock = every_s, clock
        self.last = clock()

    @property
    def is_open(self) -> bool:
        return self.descriptor is not None

    def say(self, line: str) -> None:
        """One write of one line: Snakemake's own lines never cut through it."""
        if self.descriptor is None:
            return
        self.last = self.clock()
        try:
            os.write(self.descriptor, f"{line}\n".encode())
        except OSError:
            self.descriptor = None

    def due(self) -> bool:
        return self.is_open and self.clock() - self.last >= self.every_s

    def progress(self, line: Callable[[], str]) -> None:
        """`line()` said where a line is due."""
        if self.due():
            self.say(line())


def is_open(descriptor: int) -> bool:
    try:
        os.fstat(descriptor)
    except OSError:
        return False
    return True


def log_file() -> str | None:
    """The file this process's stderr goes to (the job's log), relative to the working directory
    where it lies below it; None where stderr is not a file (a terminal, a pipe)."""
    try:
        path = os.path.realpath(f"/proc/self/fd/{sys.stderr.fileno()}")
    except (OSError, ValueError):
        return None
    if not os.path.isfile(path):
        return None
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def announce(console: Console | None, label: str, what: str) -> None:
    """The console's first line: what the job does and where its log is."""
    if console is None or not console.is_open:
        return
    log = log_file()
    follow = f"; the full log: tail -f {log}" if log else ""
    console.say(f"{label}: {what}{follow}")


def duration(seconds: float) -> str:
    """'1 h 05 min', '4 min 10 s', '12 s'; 'unknown' before any rate is known."""
    if not math.isfinite(seconds):
        return "unknown"
    whole = round(seconds)
    hours, minutes, secs = whole // 3600, whole // 60 % 60, whole % 60
    if hours:
        return f"{hours} h {minutes:02d} min"
    return f"{minutes} min {secs:02d} s" if minutes else f"{secs} s"


class TimeLeft:
    """Seconds left to do `total`, at the rate measured since the first piece of work ended;
    before a second piece, at the rate since the start."""

    def __init__(self, total: float, started: float):
        self.total, self.started = total, started
        self.first: tuple[float, float] | None = None  # (time, done) when the first piece ended
        self.now, self.done = started, 0.0

    def record(self, now: float, done: float) -> None:
        if self.first is None and done > 0:
            self.first = (now, done)
        self.now, self.done = now, done

    def rate(self) -> float | None:
        """Work per second, None before any is measured."""
        since, done_then = self.first if self.first is not None else (self.started, 0.0)
        if self.done > done_then and self.now > since:
            return (self.done - done_then) / (self.now - since)
        if self.done > 0 and self.now > self.started:
            return self.done / (self.now - self.started)
        return None

    def seconds(self) -> float:
        if self.done >= self.total:
            return 0.0
        rate = self.rate()
        return (self.total - self.done) / rate if rate else math.inf


@dataclass
class Tally:
    """A quantity a progress line counts beside the work (genes, folds): done of total. Its
    name is an identifier (`gene_nt`), shown with spaces (`gene nt`)."""

    name: str
    total: int
    done: int = 0

    @property
    def shown(self) -> str:
        return self.name.replace("_", " ")

    def text(self) -> str:
        return f"{self.done:,}/{self.total:,} {self.shown}"


class Progress:
    """`advance(work, **tallies)` as work gets done; `finish()` at the end. In the log a line at
    most every `log_every_s`, on the console where one is due (Console.progress), and the last
    line in both: the share of the work done, the tallies, a rate and the time left.

    `work_total`: the work in the unit its cost grows with (`work_unit`); `tallies`: other counts
    to show, {name: total}; `rate_of`: the tally whose rate the line shows (default the work's,
    "" for none); `shown`: (unit, total), the work as the user counts it, shown first and its
    rate shown (score_base_model: ("nt", the regions' nt) for work in nt read, flanks included).
    `clock` is time.monotonic but in tests.

    A piece of work can outlast the console's interval (a CPU batch of a long region):
    `keep_alive()` writes the line, as it stands, wherever one is due while its block runs.
    """

    def __init__(
        self,
        label: str,
        work_total: float,
        work_unit: str,
        *,
        tallies: dict[str, int] | None = None,
        rate_of: str | None = None,
        console: Console | None = None,
        log: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
        log_every_s: float = LOG_EVERY_S,
        shown: tuple[str, int] | None = None,
    ):
        self.label, self.work_total, self.work_unit = label, work_total, work_unit
        self.shown = shown
        self.lock = threading.Lock()
        self.tallies = {name: Tally(name, total) for name, total in (tallies or {}).items()}
        self.rate_of = work_unit if rate_of is None else rate_of
        self.console = console or Console(None)
        self.log = log
        self.clock = clock
        self.log_every_s = log_every_s
        self.began = self.last_log = clock()
        self.work = 0.0
        self.time_left = TimeLeft(work_total, self.began)

    def advance(self, work: float, **tallies: int) -> None:
        self.work += work
        for name, count in tallies.items():
            self.tallies[name].done += count
        self.time_left.record(self.clock(), self.work)
        self.tick()

    def tick(self) -> None:
        """The line in the log and on the console, each where one is due."""
        with self.lock:
            now = self.clock()
            if now - self.last_log >= self.log_every_s:
                self.last_log = now
                self.write_log(self.line())
            self.console.progress(self.line)

    @contextlib.contextmanager
    def keep_alive(self, poll_s: float = 1.0) -> Iterator[None]:
        """While the block runs, a thread ticks every `poll_s`: a line at least every interval
        even when one piece of work takes longer."""
        stop = threading.Event()

        def beat() -> None:
            while not stop.wait(poll_s):
                self.tick()

        thread = threading.Thread(target=beat, name=f"{self.label} progress", daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()

    def elapsed(self) -> float:
        return max(self.clock() - self.began, 0.0)

    def share(self) -> float:
        return min(self.work / self.work_total, 1.0) if self.work_total else 1.0

    def rate(self) -> float:
        """Per second since the start, of `rate_of` (of `shown` where given)."""
        if self.shown is not None:
            done = self.share() * self.shown[1]
        else:
            done = self.tallies[self.rate_of].done if self.rate_of in self.tallies else self.work
        return done / max(self.elapsed(), 1e-9)

    def counts(self) -> str:
        share = self.share()
        counted = [tally.text() for tally in self.tallies.values()]
        if self.shown is not None:
            unit, total = self.shown
            counted.insert(0, f"{share * total:,.0f}/{total:,} {unit} scored")
        if not counted:  # the tallies say what is done where there are some; the share, how much
            counted.append(f"{self.work:,.0f}/{self.work_total:,.0f} {self.work_unit}")
        return f"{share:.1%} ({', '.join(counted)})"

    def rate_text(self) -> str:
        if self.shown is not None:
            return f", {self.rate():,.0f} {self.shown[0]}/s"
        if not self.rate_of:
            return ""
        shown = self.tallies[self.rate_of].shown if self.rate_of in self.tallies else self.rate_of
        return f", {self.rate():,.0f} {shown}/s"

    def line(self) -> str:
        elapsed = duration(self.elapsed())
        if self.work <= 0 and not any(tally.done for tally in self.tallies.values()):
            # a keep-alive line before the first piece ends: no share, rate or time left to give
            unit, total = self.shown or (self.work_unit, self.work_total)
            return f"{self.label}: under way, none of the {total:,.0f} {unit} finished yet [{elapsed}]"
        left = duration(self.time_left.seconds())
        return f"{self.label}: {self.counts()}{self.rate_text()}, {left} left [{elapsed}]"

    def finish(self, last: bool = True) -> dict:
        """The closing line in the log and on the console (where it is not the job's `last`
        stage, only if a console line is due); the totals."""
        elapsed = self.elapsed()
        line = f"{self.label} done: {self.counts()}{self.rate_text()} in {duration(elapsed)}"
        self.write_log(line)
        if last:
            self.console.say(line)
        else:
            self.console.progress(lambda: line)
        return {
            "seconds": elapsed,
            "work": self.work,
            **{name: tally.done for name, tally in self.tallies.items()},
        }

    def write_log(self, line: str) -> None:
        print(line, file=self.log or sys.stderr, flush=True)
