"""Windows whose label lives only in the base model's score profile (the sequence is random)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

from tests.train_fixtures import make_training_inputs
from workflow_scripts.data.quality import read_notes, write_windows

PEAK_REACH = 10  # an error window's acceptor peak lies within this many bases of the centre
BACKGROUND = 0.01  # scores elsewhere are uniform in [0, BACKGROUND]


def score_profiles(labels: np.ndarray, lengths: np.ndarray, rng: np.random.Generator) -> tuple[list, list]:
    """(donor, acceptor) per-base lists: background noise, plus, in every error window (label 1),
    an acceptor peak in [0.3, 0.9] near its centre. Correct windows get no peak."""
    donors, acceptors = [], []
    for label, length in zip(labels.tolist(), lengths.tolist()):
        donor = rng.uniform(0, BACKGROUND, length).astype(np.float32)
        acceptor = rng.uniform(0, BACKGROUND, length).astype(np.float32)
        if label:
            at = length // 2 + int(rng.integers(-PEAK_REACH, PEAK_REACH + 1))
            acceptor[at] = rng.uniform(0.3, 0.9)
        donors.append(donor.tolist())
        acceptors.append(acceptor.tolist())
    return donors, acceptors


def windows_with_score_channels(directory: Path, n: int = 400, seed: int = 3) -> dict[str, Path]:
    """make_training_inputs' files with random sequences and donor_scores/acceptor_scores columns
    (List(Float32), one score per base) that alone carry the label."""
    paths = make_training_inputs(directory, n=n, seed=seed)
    windows = pl.read_parquet(paths["windows"])
    rng = np.random.default_rng(seed + 1)
    lengths = windows["length"].to_numpy()
    sequences = ["".join(rng.choice(list("ACGT"), int(length))) for length in lengths]
    donors, acceptors = score_profiles(windows["label"].to_numpy(), lengths, rng)
    scored = windows.with_columns(
        pl.Series("sequence", sequences),
        pl.Series("donor_scores", donors, dtype=pl.List(pl.Float32)),
        pl.Series("acceptor_scores", acceptors, dtype=pl.List(pl.Float32)),
    )
    write_windows(scored, paths["windows"], read_notes(paths["windows"]))
    return paths


def without_score_channels(paths: dict[str, Path], directory: Path) -> Path:
    """A copy of the windows table with acceptor_scores dropped."""
    out = directory / "windows_without_scores.parquet"
    windows = pl.read_parquet(paths["windows"]).drop("acceptor_scores")
    write_windows(windows, out, read_notes(paths["windows"]))
    return out
