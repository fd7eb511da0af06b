"""OpenSpliceAI's `transfer` outputs read back (0.0.7's `train_base/utils.py`): the experiment
folder, its checkpoints after each epoch, and its metric logs.

`{output_dir}/SpliceAI_{project}_{flank}_{exp}_rs{seed}/{exp}/` holds `models/model_{epoch}.pt`
(epoch from 0) and `LOG/{TRAIN,VAL,TEST}/`, where `{acceptor,donor}_topk_all.txt` get one line per
evaluation (once per epoch for each split): top-k accuracy at k = 0.5, 1, 2, 4 × the true sites,
AUPRC, the four score thresholds, the number of true sites; tab-separated. It computes them on at
most 1,000 windows that hold a site, in full batches only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from workflow_scripts.errors import InputError

LOG_SPLITS = {"train": "TRAIN", "validation": "VAL", "test": "TEST"}
TYPES = ("acceptor", "donor")


def experiment_folder(output_dir: Path, project: str, flank: int, exp: int, seed: int) -> Path:
    return output_dir / f"SpliceAI_{project}_{flank}_{exp}_rs{seed}" / str(exp)


def checkpoint(folder: Path, epoch: int) -> Path:
    """The state dict saved after `epoch` (1-based, as this benchmark counts)."""
    return folder / "models" / f"model_{epoch - 1}.pt"


@dataclass(frozen=True)
class TopkLine:
    topk: tuple[float, float, float, float]  # k = 0.5, 1, 2, 4 × true sites
    auprc: float
    thresholds: tuple[float, float, float, float]
    sites: int


def parse_topk_all(text: str, source: str) -> list[TopkLine]:
    """Every line of a `*_topk_all.txt`."""
    lines = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != 10:
            raise InputError(source, f"line {number}", f"{len(fields)} fields, OpenSpliceAI writes 10")
        try:
            values = [float(field) for field in fields[:9]]
            sites = int(fields[9])
        except ValueError:
            raise InputError(source, f"line {number}", f"not numbers: {line.strip()!r}") from None
        lines.append(TopkLine(tuple(values[:4]), values[4], tuple(values[5:9]), sites))  # type: ignore[arg-type]
    return lines


def logged_metrics(folder: Path, split: str) -> dict[str, list[TopkLine]]:
    """{type: one line per epoch} of one split's log ({} of a type whose file is missing)."""
    found = {}
    for kind in TYPES:
        path = folder / "LOG" / LOG_SPLITS[split] / f"{kind}_topk_all.txt"
        if path.exists():
            found[kind] = parse_topk_all(path.read_text(), str(path))
    return found


def read_epochs_log(path: Path) -> list[dict]:
    """The worker's JSON lines (osai_worker.py), one per training epoch."""
    if not path.exists():
        return []
    records = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            raise InputError(path, f"line {number}", "not JSON (an interrupted write?)") from None
    return records
