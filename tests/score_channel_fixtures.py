"""Windows whose label lives only in the base model's score profile (the sequence is random)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest
import torch

from tests.train_fixtures import make_training_inputs
from workflow_scripts.data.quality import read_notes, write_windows
from workflow_scripts.models.builtin import build_model
from workflow_scripts.tokenization.tokenizers import NucleotideTokenizer
from workflow_scripts.training.batches import BatchCollator, load_split, model_inputs

PEAK_REACH = 10  # an error window's acceptor peak lies within this many bases of the centre
BACKGROUND = 0.01  # scores elsewhere are uniform in [0, BACKGROUND]
CNN = {"arch": "cnn", "d_model": 16, "n_layers": 1, "kernel_size": 5, "dropout": 0.0}


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


@pytest.fixture
def one_thread():
    """One torch thread: small models train many times faster than with threads contending."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def train_small_cnn(
    paths, channels, epochs: int = 3, model_cfg: dict = CNN, lr: float = 0.01
) -> torch.nn.Module:
    """A model (by default a small CNN) trained in-process on the train split, as train builds it."""
    torch.manual_seed(0)
    tokenizer = NucleotideTokenizer(1)
    train = load_split(paths["windows"], paths["manifest"], "train", (), channels)
    model = build_model(model_cfg, tokenizer.vocab_size, 128, n_score_channels=len(channels))
    optimiser = torch.optim.AdamW(model.parameters(), lr=lr)
    collator, order = BatchCollator(train, tokenizer, 128), np.random.default_rng(0)
    for _ in range(epochs):
        model.train()
        for indices in np.array_split(order.permutation(len(train)), len(train) // 16):
            batch = collator(indices.tolist())
            loss = torch.nn.functional.cross_entropy(model(*model_inputs(batch)), batch["labels"])
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
    return model.eval()
