"""Whether an experiment's windows can give a meaningful result, and the notes extract leaves.

After the gene-level split, every split (train, val, test) must hold windows of both classes:
train learns from them, val picks the epoch and the threshold, test is scored. A split without
one class makes its metrics undefined (an error class confined to one or two genes does this:
a gene's windows all go to one split), so extract refuses it.

A split with fewer than MIN_CLASS_WINDOWS windows of a class still gives numbers, but with wide
intervals (with 20 windows of the rarer class, one ROC-AUC's standard error is about 0.06-0.1;
the plots draw per-bucket curves from the same count). Extract then writes a warning line to its
log and keeps it in windows.parquet's notes (`read_notes`) for the reports downstream.

The notes are one JSON object in the parquet file's key-value metadata under NOTES_KEY: window
flank, length and site offset, the experiment's labels, windows per split and class, rows dropped
(repeated calls rows, windows without a single A/C/G/T) and the warnings.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from workflow_scripts.config.types import ExperimentSection
from workflow_scripts.data.splits import SPLIT_NAMES
from workflow_scripts.errors import InputError
from workflow_scripts.io_utils import atomic_path

MIN_CLASS_WINDOWS = 20
NOTES_KEY = "errorseq.extract"


def class_counts(frame: pl.DataFrame) -> dict[str, dict[str, int]]:
    """{split: {"error": n, "correct": n}} for every split name."""
    counts = {split: {"error": 0, "correct": 0} for split in SPLIT_NAMES}
    for split, label, n in frame.group_by("split", "label").len().iter_rows():
        counts[split]["error" if label == 1 else "correct"] = int(n)
    return counts


def genes_of_class(frame: pl.DataFrame, label: int) -> int:
    return frame.filter(pl.col("label") == label)["gene_id"].n_unique()


def check_splits(
    frame: pl.DataFrame, path, experiment: str, class_names: dict[str, str], all_n: int
) -> list[str]:
    """InputError when a split lacks a class; warnings for classes with few windows in a split.
    all_n: how many windows were dropped for being all N (they may have taken a whole class)."""
    counts, warnings = class_counts(frame), []
    for role in ("error", "correct"):
        if sum(counts[split][role] for split in SPLIT_NAMES) == 0:
            raise InputError(
                path,
                f"experiment '{experiment}'",
                f"no {class_names[role]} windows ({role} class) "
                f"left after dropping {all_n} windows that were all N",
            )
    for split in SPLIT_NAMES:
        for role, label in (("error", 1), ("correct", 0)):
            n, name = counts[split][role], class_names[role]
            if n == 0:
                raise InputError(
                    path,
                    f"experiment '{experiment}' split '{split}'",
                    f"no {name} windows ({role} class): the {name} windows lie in "
                    f"{genes_of_class(frame, label)} gene(s) and each gene's windows go to one split; "
                    "every split needs both classes (add calls from more genes, or change split.seed)",
                )
            if n < MIN_CLASS_WINDOWS:
                warnings.append(
                    f"experiment '{experiment}': split '{split}' has {n} {name} windows ({role} class), "
                    f"fewer than {MIN_CLASS_WINDOWS}: its metrics have wide intervals"
                )
    return warnings


def experiment_labels(experiment: dict) -> dict[str, str]:
    """The error and correct labels of an experiments: entry given as a dict (ExperimentSection.labels)."""
    return ExperimentSection.from_completed(experiment).labels()


def notes(
    frame: pl.DataFrame,
    window: dict[str, int],
    labels: dict[str, str],
    dropped: dict[str, int],
    warnings: list[str],
) -> dict:
    """window: flank, length and site_offset of every window (calls mode; {} for a sequences
    table); labels: the experiment's error and correct labels (train records both in model.json)."""
    return {
        "windows": frame.height,
        "class_counts": class_counts(frame),
        "window": window,
        "labels": labels,
        "dropped": dropped,
        "warnings": warnings,
    }


def write_windows(frame: pl.DataFrame, path, extract_notes: dict) -> None:
    """windows.parquet, atomically, with the notes in its metadata."""
    with atomic_path(path) as tmp:
        frame.write_parquet(tmp, metadata={NOTES_KEY: json.dumps(extract_notes)})


def read_notes(path: str | Path) -> dict:
    """The notes extract left in a windows.parquet ({} for a table written without them)."""
    metadata = pl.read_parquet_metadata(path)
    return json.loads(metadata[NOTES_KEY]) if NOTES_KEY in metadata else {}


def summary_line(frame: pl.DataFrame, experiment: str, seconds: float) -> str:
    counts = class_counts(frame)
    parts = [
        f"{split} {sum(counts[split].values())} ({counts[split]['error']} error/{counts[split]['correct']} correct)"
        for split in SPLIT_NAMES
    ]
    return f"extract: experiment '{experiment}': {frame.height} windows; {'; '.join(parts)}; {seconds:.2f} s"
