"""Resumable training checkpoints, written so that a kill during a save loses nothing.

Each checkpoint is a folder `step-NNNNNNNN/`: `trainer.pt` (loop position, LR schedule, RNG of
every rank) plus the strategy's own files (a state dict for DDP, DCP shards for FSDP, DeepSpeed's
checkpoint for deepspeed). It is written as `.step-NNNNNNNN.partial/`, renamed when complete, and
only then named in `latest`; older folders are pruned after that. A kill at any moment leaves
`latest` naming a complete checkpoint.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import torch

from workflow_scripts.io_utils import write_text

LATEST_POINTER = "latest"
TRAINER_FILE = "trainer.pt"
BEST_FILE = "best.pt"
SIGNATURE_FILE = "run.json"
KEEP_LAST = 2
LOGGING_KEYS = ("checkpoint_every_steps", "log_every_steps", "tensorboard")


def run_signature(train: dict, model: dict, world_size: int, inputs: dict, **settings) -> dict:
    """What a checkpoint must share with a run to be resumed from: the train config (less its
    logging keys), the model, the world size, each input file's size and mtime (None = no such
    input) and any other setting that changes what is learnt."""
    stamps = {
        name: [os.stat(path).st_size, os.stat(path).st_mtime_ns] for name, path in inputs.items() if path
    }
    return {
        "train": {key: value for key, value in train.items() if key not in LOGGING_KEYS},
        "model": model,
        "world_size": world_size,
        "inputs": stamps,
        **settings,
    }


class CheckpointManager:
    """Every method is called on every rank; only rank 0 touches shared files itself."""

    def __init__(
        self,
        directory: str | os.PathLike,
        is_main: bool,
        barrier: Callable[[], None] = lambda: None,
        signature: dict | None = None,
    ):
        self.directory = Path(directory)
        self.is_main = is_main
        self.barrier = barrier
        if is_main:
            self.directory.mkdir(parents=True, exist_ok=True)
            if signature is not None:
                self._discard_if_other_run(signature)
        self.barrier()

    def _discard_if_other_run(self, signature: dict) -> None:
        """Checkpoints of another config, data or world size are not resumed from: cleared."""
        path = self.directory / SIGNATURE_FILE
        if path.exists() and json.loads(path.read_text()) == signature:
            return
        if any(self.directory.iterdir()):
            print(
                f"note: {self.directory} holds checkpoints of another run (config, data or world "
                "size differ): starting afresh",
                flush=True,
            )
        for entry in self.directory.iterdir():
            shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
        write_text(path, json.dumps(signature, sort_keys=True) + "\n")

    def save(self, step: int, trainer_state: dict, write_shards: Callable[[Path], None]) -> Path:
        """Collective: `write_shards(folder)` writes the strategy's files on every rank."""
        final = self.directory / f"step-{step:08d}"
        partial = self.directory / f".{final.name}.partial"
        if self.is_main:
            shutil.rmtree(partial, ignore_errors=True)
            partial.mkdir(parents=True)
        self.barrier()
        write_shards(partial)
        if self.is_main:
            torch.save(trainer_state, partial / TRAINER_FILE)
        self.barrier()
        if self.is_main:
            self._publish(partial, final)
        self.barrier()
        return final

    def _publish(self, partial: Path, final: Path) -> None:
        if final.exists():  # a re-save of the same step (after a resume)
            if self.latest_path() == final:
                write_text(self.directory / LATEST_POINTER, "")
            shutil.rmtree(final)
        os.replace(partial, final)
        write_text(self.directory / LATEST_POINTER, final.name + "\n")
        self._prune(keep=final)

    def latest_path(self) -> Path | None:
        pointer = self.directory / LATEST_POINTER
        if not pointer.exists() or not pointer.read_text().strip():
            return None
        path = self.directory / pointer.read_text().strip()
        return path if (path / TRAINER_FILE).exists() else None

    def load_trainer_state(self, path: Path) -> dict:
        return torch.load(path / TRAINER_FILE, map_location="cpu", weights_only=True)

    def save_best(self, model_state: dict) -> None:
        if self.is_main:
            with_tmp = self.directory / f".{BEST_FILE}.partial"
            torch.save(model_state, with_tmp)
            os.replace(with_tmp, self.directory / BEST_FILE)

    def load_best(self) -> dict | None:
        path = self.directory / BEST_FILE
        if not path.exists():
            return None
        return torch.load(path, map_location="cpu", weights_only=True)

    def _prune(self, keep: Path) -> None:
        folders = sorted(p for p in self.directory.glob("step-*") if p.is_dir())
        for old in folders[:-KEEP_LAST]:
            if old != keep:
                shutil.rmtree(old, ignore_errors=True)
        for stale in self.directory.glob(".step-*.partial"):
            shutil.rmtree(stale, ignore_errors=True)


def capture_rng() -> dict:
    state = {"torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state()
    return state


def restore_rng(state: dict) -> None:
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state(state["cuda"])
