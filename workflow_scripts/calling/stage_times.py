"""Where a loop's time goes: seconds per named stage, summed over the loop's iterations."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager


class StageTimes:
    """`with times("stage"):` adds the block's wall seconds to that stage (on the calling thread;
    on a GPU a stage that only queues device work counts the queueing, not the device's time)."""

    def __init__(self):
        self.seconds: dict[str, float] = defaultdict(float)

    @contextmanager
    def __call__(self, stage: str) -> Iterator[None]:
        began = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[stage] += time.perf_counter() - began

    def add(self, stage: str, seconds: float) -> None:
        self.seconds[stage] += seconds

    def text(self) -> str:
        return ", ".join(f"{stage} {seconds:.2f}" for stage, seconds in self.seconds.items())
