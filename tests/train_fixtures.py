"""Small windows/manifest/summary files for training tests, with a learnable motif."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import polars as pl

from testkit.rule_commands import train_path_args
from tests.workflow_helpers import subprocess_env  # noqa: F401  (re-exported: one env for all subprocesses)
from workflow_scripts.config.sections import section_defaults
from workflow_scripts.config.train import TrainConfig
from workflow_scripts.data.quality import notes, write_windows

ROOT = Path(__file__).resolve().parents[1]
MOTIF = "GATTACAGG"
LABELS = {"error": "FP", "correct": "TP"}


def make_training_inputs(directory: Path, n: int = 240, seed: int = 0) -> dict[str, Path]:
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 2, n)
    lengths = rng.integers(40, 120, n)
    sequences = []
    for label, length in zip(labels, lengths):
        seq = list(rng.choice(list("ACGT"), length))
        if label:
            start = rng.integers(0, length - len(MOTIF))
            seq[start : start + len(MOTIF)] = MOTIF
        sequences.append("".join(seq))
    splits = np.where(np.arange(n) % 10 < 8, "train", np.where(np.arange(n) % 10 == 8, "val", "test"))
    ids = [f"w{i}" for i in range(n)]
    boundaries, batch_sizes = [60, 90, 121], [8, 6, 4]
    token_lengths = lengths + 1
    buckets = np.searchsorted(boundaries, token_lengths)
    paths = {
        k: directory / v
        for k, v in {
            "windows": "windows.parquet",
            "manifest": "manifest.parquet",
            "summary": "summary.json",
        }.items()
    }
    windows = pl.DataFrame(
        {
            "id": ids,
            "gene_id": [f"g{i // 3}" for i in range(n)],
            "split": splits,
            "label": labels.astype(np.int8),
            "sequence": sequences,
            "length": lengths.astype(np.int32),
        }
    )
    write_windows(windows, paths["windows"], notes(windows, {}, LABELS, {}, []))  # a sequences table's
    pl.DataFrame(
        {
            "id": ids,
            "split": splits,
            "label": labels.astype(np.int8),
            "length": lengths.astype(np.int32),
            "token_length": token_lengths.astype(np.int32),
            "bucket": buckets.astype(np.int16),
        }
    ).write_parquet(paths["manifest"])
    paths["summary"].write_text(
        json.dumps(
            {
                "tokenizer": {"kind": "nucleotide", "k": 1},
                "boundaries": boundaries,
                "batch_sizes": batch_sizes,
                "max_length": 128,
            }
        )
    )
    return paths


def launch_command(
    inputs: dict[str, Path], out: Path, train_cfg: dict, model_cfg: dict, procs: int = 2
) -> list[str]:
    """The train rule's entry point on these inputs: torchrun with `procs` CPU ranks."""
    return [
        sys.executable,
        "-m",
        "workflow_scripts.rules.train",
        "--config",
        json.dumps({"model": model_cfg, "train": train_cfg}),
        *train_path_args(inputs, out, "experiment"),
        "--gpus",
        "0",
        "--cpu-procs",
        str(procs),
        "--threads",
        "2",
    ]


def train_config(**values) -> TrainConfig:
    """A TrainConfig of the schema's defaults with `values` over them."""
    return TrainConfig.from_section({**section_defaults("train"), **values})


def child_pids(pid: int) -> list[int]:
    """Direct children of `pid` (Linux /proc)."""
    children = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            children.append(int(stat.parent.name))
    return sorted(children)
