"""The benchmark's tables as rows, from what the sides handed back (no measuring here)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from benchmarks.base_training.layout import SplitLayout
from benchmarks.base_training.osai_logs import TYPES, TopkLine
from benchmarks.base_training.sides import SideRun

LAYOUT_HEADER = [
    "split",
    "genes",
    "labelled nt (gene nt)",
    "windows",
    "input nt",
    "input nt per labelled nt",
    "N padding share of input",
    "windows in full batches",
]
PREPARE_HEADER = ["split", "create-data wall s", "CPU s", "peak RSS MiB"]
THROUGHPUT_HEADER = [
    "side",
    "epoch",
    "labelled nt",
    "input nt per labelled nt",
    "training CPU-s",
    "labelled nt per CPU-s",
    "wall s",
    "labelled nt per wall-s",
    "peak RSS MiB",
]
HELDOUT_HEADER = [
    "side",
    "epoch",
    "windows",
    "acceptor top-k",
    "acceptor AUPRC",
    "donor top-k",
    "donor AUPRC",
    "sites (acc/don)",
]
LOG_HEADER = ["epoch", "acceptor top-k", "acceptor AUPRC", "donor top-k", "donor AUPRC", "sites (acc/don)"]


def ratio(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator else math.nan


def layout_rows(layouts: dict[str, SplitLayout]) -> list[list]:
    return [
        [
            split,
            layout.genes,
            layout.labelled_nt,
            layout.windows,
            layout.input_nt,
            round(layout.input_per_labelled, 2),
            round(layout.padding_share, 3),
            layout.seen_windows,
        ]
        for split, layout in layouts.items()
    ]


def prepare_rows(records: dict[str, dict]) -> list[list]:
    return [
        [split, round(r["wall_s"], 1), round(r["cpu_s"], 1), round(r["peak_rss_mib"])]
        for split, r in records.items()
    ]


def throughput_rows(runs: list[SideRun]) -> list[list]:
    """One row per side and epoch, then the side's total over its epochs."""
    rows = []
    for run in runs:
        for cost in run.epochs:
            rows.append(
                [
                    run.side,
                    cost.epoch,
                    cost.labelled_nt,
                    round(ratio(cost.input_nt, cost.labelled_nt), 2),
                    round(cost.cpu_s, 1),
                    round(ratio(cost.labelled_nt, cost.cpu_s)),
                    round(cost.wall_s, 1),
                    round(ratio(cost.labelled_nt, cost.wall_s)),
                    round(run.peak_rss_mib),
                ]
            )
        labelled = sum(c.labelled_nt for c in run.epochs)
        cpu = sum(c.cpu_s for c in run.epochs)
        wall = sum(c.wall_s for c in run.epochs)
        rows.append(
            [
                run.side,
                "all",
                labelled,
                round(ratio(sum(c.input_nt for c in run.epochs), labelled), 2),
                round(cpu, 1),
                round(ratio(labelled, cpu)),
                round(wall, 1),
                round(ratio(labelled, wall)),
                round(run.peak_rss_mib),
            ]
        )
    return rows


def speedup_rows(runs: list[SideRun], reference: str) -> list[list]:
    """Each other side's labelled nt per CPU-s over all epochs, as a multiple of `reference`'s."""
    per_cpu = {
        run.side: ratio(sum(c.labelled_nt for c in run.epochs), sum(c.cpu_s for c in run.epochs))
        for run in runs
    }
    base = per_cpu.get(reference, math.nan)
    return [
        [side, round(value), round(ratio(value, base), 2)]
        for side, value in per_cpu.items()
        if side != reference
    ]


def metric_cells(found: dict[str, dict[str, float]]) -> list:
    cells: list = []
    for kind in TYPES:
        cells += [round(found[kind]["topk"], 4), round(found[kind]["auprc"], 4)]
    return [*cells, f"{found['acceptor']['sites']}/{found['donor']['sites']}"]


def heldout_rows(results: Sequence[tuple[str, int | str, str, dict]]) -> list[list]:
    """(side, epoch, windows name, {type: {topk, auprc, sites}}) → rows, as given."""
    return [[side, epoch, windows, *metric_cells(found)] for side, epoch, windows, found in results]


def log_rows(logged: dict[str, list[TopkLine]]) -> list[list]:
    """OpenSpliceAI's own log of one split: a row per epoch (top-k at k = 1, as it prints)."""
    epochs = min((len(lines) for lines in logged.values()), default=0)
    rows = []
    for epoch in range(epochs):
        cells: list = [epoch + 1]
        for kind in TYPES:
            line = logged[kind][epoch]
            cells += [round(line.topk[1], 4), round(line.auprc, 4)]
        cells.append(f"{logged['acceptor'][epoch].sites}/{logged['donor'][epoch].sites}")
        rows.append(cells)
    return rows
