"""What each side of the comparison is given and hands back.

A side is a function `(setup, work) -> SideRun`: it trains a base model on `setup.split`'s train
genes (validation genes for its own checks, test genes never), from `setup.weights`, at
`setup.flank`, for `setup.epochs` epochs, in a process of its own, and returns per epoch what it
measured plus a checkpoint in OpenSpliceAI's state-dict format; the benchmark scores every
checkpoint on the same held-out windows (heldout.py), so neither side grades itself.

`peer.openspliceai_side` is OpenSpliceAI's, `errorseq.errorseq_side` errorseq's: where this
checkout has no `train_base` yet it raises `SideNotAvailable`, and the table says so; no number
stands in.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from benchmarks.base_training.genes import GeneSplit


@dataclass(frozen=True)
class Setup:
    genome: Path  # FASTA
    annotation: Path  # GTF or GFF3, any source errorseq reads
    split: GeneSplit
    flank: int  # 80, 400, 2,000 or 10,000
    weights: Path  # start weights: an OpenSpliceAI state dict (.pt)
    epochs: int
    seed: int
    threads: int  # torch threads of the training process
    # AdamW at 1e-4 (OpenSpliceAI's transfer), then "cosine": cosine from 1e-4 toward 1e-5 over 5
    # epochs, warm restarts (CosineAnnealingWarmRestarts T_0 5, eta_min 1e-5, stepped per batch by the
    # epoch fraction: the paper's runs), or "multistep": halved at each of the last 4 epochs, which
    # its per-batch stepping applies from the first step (a 2-epoch run trains at 1e-4 / 8, then / 16)
    schedule: str = "cosine"


@dataclass(frozen=True)
class EpochCost:
    """One training epoch as the side measured it (the training steps, not its evaluation)."""

    epoch: int  # 1-based
    labelled_nt: int  # positions whose label the loss counts
    input_nt: int  # nt the model read for them
    cpu_s: float  # process CPU seconds (every thread) of the training steps
    wall_s: float


@dataclass
class SideRun:
    side: str
    epochs: list[EpochCost]
    peak_rss_mib: float  # the training process's high-water mark (VmHWM)
    checkpoints: list[Path]  # after each epoch, OpenSpliceAI state dicts, as many as epochs
    notes: list[str] = field(default_factory=list)  # what the reader must know (one line each)


class TrainingSide(Protocol):
    def __call__(self, setup: Setup, work: Path) -> SideRun: ...


class SideNotAvailable(RuntimeError):
    """A side that cannot run here (a stub, or a missing package)."""
