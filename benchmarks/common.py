"""Shared helpers of the benchmark scripts: length distributions, load and table printing."""

from __future__ import annotations

import os
import time
from contextlib import contextmanager

import numpy as np


def lognormal_lengths(n: int, seed: int = 0) -> np.ndarray:
    """Long-tailed token lengths: log-normal (median 300) clipped to 50..2000."""
    rng = np.random.default_rng(seed)
    return np.clip(np.round(np.exp(rng.normal(np.log(300), 0.7, n))), 50, 2000).astype(np.int64)


def uniform_lengths(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(150, 769, n).astype(np.int64)


def load_line() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} CPUs"


def print_table(title: str, header: list[str], rows: list[list]) -> None:
    """A Markdown table (pastes into docs/performance.md as it is)."""
    print(f"\n### {title}\n")
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join(" --- " for _ in header) + "|")
    for row in rows:
        print("| " + " | ".join(_cell(value) for value in row) + " |")
    print(flush=True)


def _cell(value) -> str:
    if isinstance(value, float):
        return f"{value:.3f}" if value < 10 else f"{value:,.0f}"
    if isinstance(value, (int, np.integer)):
        return f"{value:,}"
    return str(value)


@contextmanager
def stopwatch(result: dict, key: str = "seconds"):
    began = time.perf_counter()
    yield
    result[key] = time.perf_counter() - began


def best_of(repeats: int, function, *args) -> tuple[float, object]:
    """Least wall time of `repeats` calls (noise on a shared machine only adds time)."""
    best, value = float("inf"), None
    for _ in range(repeats):
        began = time.perf_counter()
        value = function(*args)
        best = min(best, time.perf_counter() - began)
    return best, value
