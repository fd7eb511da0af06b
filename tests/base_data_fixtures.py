"""Tiny base_data folders in BASE_DATA_CONTRACT.md's format (blocks.parquet, sequence.npy,
labels.npy, manifest.json) for train_base's tests: random DNA with planted sites (a donor's GT
after its last exon base, an acceptor's AG before its first) so that a few steps learn something."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl

from workflow_scripts.training.base.blocks import BaseDataFiles

CODES = {"A": 0, "C": 1, "G": 2, "T": 3}


def write_base_data(
    folder: Path, context: int = 400, blocks: int = 24, seed: int = 0, core: tuple[int, int] = (150, 700)
) -> BaseDataFiles:
    """`blocks` blocks (every 6th validation, every 8th test, the rest train) of cores of random
    length in `core`, each with context/2 nt of flank on each side (labels -1 there)."""
    rng = np.random.default_rng(seed)
    half = context // 2
    rows, sequences, labels, offset = [], [], [], 0
    for index in range(blocks):
        core_length = int(rng.integers(*core))
        length = core_length + 2 * half
        bases = rng.integers(0, 4, length).astype(np.uint8)
        label = np.zeros(length, dtype=np.int8)
        label[:half] = -1
        label[length - half :] = -1
        for position in rng.choice(
            np.arange(half + 5, length - half - 5), size=max(2, core_length // 120), replace=False
        ):
            if rng.random() < 0.5:  # donor: last exon base, then GT
                bases[position + 1], bases[position + 2] = CODES["G"], CODES["T"]
                label[position] = 2
            else:  # acceptor: AG, then the first exon base
                bases[position - 2], bases[position - 1] = CODES["A"], CODES["G"]
                label[position] = 1
        split = "validation" if index % 6 == 5 else "test" if index % 8 == 7 else "train"
        rows.append(
            {
                "block": index,
                "split": split,
                "chrom": "c1",
                "strand": "+",
                "core_start": 100_000 * index,
                "core_end": 100_000 * index + core_length,
                "offset": offset,
                "length": length,
                "genes": [f"g{index}"],
                "cluster": index,
            }
        )
        sequences.append(bases)
        labels.append(label)
        offset += length
    folder.mkdir(parents=True, exist_ok=True)
    files = BaseDataFiles(
        str(folder / "blocks.parquet"),
        str(folder / "sequence.npy"),
        str(folder / "labels.npy"),
        str(folder / "manifest.json"),
    )
    table = pl.DataFrame(rows).with_columns(pl.col("block").cast(pl.Int32), pl.col("cluster").cast(pl.Int64))
    table.write_parquet(files.blocks)
    np.save(files.sequence, np.concatenate(sequences))
    np.save(files.labels, np.concatenate(labels))
    manifest = {
        "format": 1,
        "half_context": half,
        "context": context,
        "genome": {"name": "tiny.fa", "sha256": "0" * 64},
        "annotation": {"name": "tiny.gff3", "sha256": "1" * 64},
        "split": {"rule": "clusters", "seed": seed},
        "counts": {},
    }
    Path(files.manifest).write_text(json.dumps(manifest))
    return files


def train_base_command(
    files: BaseDataFiles, out: Path, settings: dict, procs: int = 2, seed: int = 10, init: Path | None = None
) -> list[str]:
    """The train_base rule's entry point (torchrun with `procs` CPU ranks) writing into `out`."""
    import sys

    from workflow_scripts.command_line import path_flags

    inputs: dict[str, str | None] = {
        "blocks": files.blocks,
        "bases": files.sequence,
        "labels": files.labels,
    }
    inputs |= {"data_manifest": files.manifest, "init_weights": str(init) if init else None}
    outputs = {
        "model": str(out / "models" / f"model_80nt_rs{seed}.pt"),
        "provenance": str(out / "models" / f"model_80nt_rs{seed}.provenance.json"),
        "card": str(out / "models" / f"model_80nt_rs{seed}.card.md"),
    }
    return [
        sys.executable,
        "-m",
        "workflow_scripts.rules.train_base",
        *path_flags(inputs, outputs),
        "--config",
        json.dumps({"train_base": {"context": 80, **settings}}),
        "--run-dir",
        str(out / "run"),
        "--seed",
        str(seed),
        "--cpu-procs",
        str(procs),
        "--threads",
        str(procs),
    ]
