"""Markdown tables: what every benchmark prints (it pastes into docs/performance.md as it is),
the load line each title carries, and the reverse, tables read back from printed text."""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass

import numpy as np

NUMBER = re.compile(r"[-+]?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?")


def load_line() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} CPUs"


def print_table(title: str, header: list[str], rows: list[list]) -> None:
    """A Markdown table under a `###` title."""
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


def best_of(repeats: int, function, *args) -> tuple[float, object]:
    """Least wall time of `repeats` calls (noise on a shared machine only adds time)."""
    best, value = float("inf"), None
    for _ in range(repeats):
        began = time.perf_counter()
        value = function(*args)
        best = min(best, time.perf_counter() - began)
    return best, value


@dataclass
class Table:
    """A printed table read back: its title, header and cells (text)."""

    title: str
    header: list[str]
    rows: list[list[str]]

    def column(self, name: str) -> list[str]:
        """The cells of the first column whose header starts with `name`."""
        index = next(i for i, heading in enumerate(self.header) if heading.startswith(name))
        return [row[index] for row in self.rows]

    def numbers(self, name: str) -> list[float]:
        """The first number in each cell of a column (`1,234.5 (0.98×)` → 1234.5)."""
        return [number(cell) for cell in self.column(name)]

    def row(self, first_cell: str) -> list[str]:
        """The row whose first cell starts with `first_cell`."""
        return next(row for row in self.rows if row[0].startswith(first_cell))


def number(cell: str) -> float:
    """The first number in a cell; ValueError when it holds none."""
    found = NUMBER.search(cell)
    if found is None:
        raise ValueError(f"no number in {cell!r}")
    return float(found.group().replace(",", ""))


def shown_range(cell: str) -> tuple[float, float]:
    """The values that print as the first number in a cell: ± half a unit of its last digit
    (`13` → 12.5..13.5, `0.371` → 0.3705..0.3715), so a check between printed numbers holds
    whatever their size, on a fast machine or a slow one."""
    found = NUMBER.search(cell)
    if found is None:
        raise ValueError(f"no number in {cell!r}")
    text = found.group().replace(",", "")
    decimals = len(text.split(".")[1]) if "." in text and "e" not in text.lower() else 0
    half = 0.5 * 10.0**-decimals
    return float(text) - half, float(text) + half


def read_tables(text: str) -> list[Table]:
    """Every table print_table wrote into `text`, in order."""
    tables, title = [], ""
    for block in text.split("\n\n"):
        lines = [line for line in block.strip().splitlines() if line.strip()]
        if len(lines) == 1 and lines[0].startswith("### "):
            title = lines[0][4:]
        elif len(lines) >= 2 and lines[0].startswith("| ") and lines[1].startswith("| ---"):
            cells = [[cell.strip() for cell in line.strip().strip("|").split(" | ")] for line in lines]
            tables.append(Table(title, cells[0], [row for row in cells[2:]]))
    return tables
