"""Where a loop's time goes: seconds per named stage, summed over the loop's iterations."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager


class StageTimes:
    """`with times("stage"):` adds the block's wall seconds (`seconds`) and the calling thread's CPU
    seconds (`cpu_seconds`) to that stage. On a GPU a stage that only queues device work counts the
    queueing, not the device's time."""

    def __init__(self):
        self.seconds: dict[str, float] = defaultdict(float)
        self.cpu_seconds: dict[str, float] = defaultdict(float)

    @contextmanager
    def __call__(self, stage: str) -> Iterator[None]:
        began, cpu = time.perf_counter(), time.thread_time()
        try:
            yield
        finally:
            self.seconds[stage] += time.perf_counter() - began
            self.cpu_seconds[stage] += time.thread_time() - cpu
