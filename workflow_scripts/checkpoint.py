"""Resumable training checkpoints, written so that a kill during a save loses nothing."""

from __future__ import annotations

import os
from pathlib import Path

import torch

from workflow_scripts.io_utils import atomic_path, write_text

LATEST_POINTER = "latest"
KEEP_LAST = 2


class CheckpointManager:
    """Saves `step-NNNNNNNN.pt` files and a `latest` pointer that is updated last."""

    def __init__(self, directory: str | os.PathLike, is_main: bool):
        self.directory = Path(directory)
        self.is_main = is_main
        if is_main:
            self.directory.mkdir(parents=True, exist_ok=True)

    def save(self, state: dict, step: int) -> Path:
        path = self.directory / f"step-{step:08d}.pt"
        if self.is_main:
            with atomic_path(path) as tmp:
                torch.save(state, tmp)
            write_text(self.directory / LATEST_POINTER, path.name + "\n")
            self._prune()
        return path

    def latest_path(self) -> Path | None:
        pointer = self.directory / LATEST_POINTER
        if not pointer.exists():
            return None
        path = self.directory / pointer.read_text().strip()
        return path if path.exists() else None

    def load_latest(self) -> dict | None:
        path = self.latest_path()
        if path is None:
            return None
        return torch.load(path, map_location="cpu", weights_only=True)

    def save_best(self, model_state: dict) -> None:
        if self.is_main:
            with atomic_path(self.directory / "best.pt") as tmp:
                torch.save(model_state, tmp)

    def load_best(self) -> dict | None:
        path = self.directory / "best.pt"
        if not path.exists():
            return None
        return torch.load(path, map_location="cpu", weights_only=True)

    def _prune(self) -> None:
        steps = sorted(self.directory.glob("step-*.pt"))
        for old in steps[:-KEEP_LAST]:
            old.unlink(missing_ok=True)


def capture_rng() -> dict:
    state = {"torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state()
    return state


def restore_rng(state: dict) -> None:
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state(state["cuda"])
