"""Resumable training checkpoints, written so that neither a kill nor a power cut loses a good one.

Each checkpoint is a folder `step-NNNNNNNN/`: `trainer.pt` (loop position, LR schedule, RNG of
every rank), the strategy's own files (a state dict for DDP, DCP shards for FSDP, DeepSpeed's
checkpoint for deepspeed) and `files.json`, the size of every file. It is written as
`.step-NNNNNNNN.partial/`, flushed to the disk (fsync of every file and folder), renamed when
complete, and only then named in `latest`; older folders are pruned after that.

A rerun resumes from the newest checkpoint that loads: one whose files are missing or of another
size than when saved, or whose trainer.pt does not load, is skipped with one line, and the one
before it is tried. `run.json` holds the run's signature (the digest of the training settings,
the model, inputs, world size and the digest of the code): checkpoints of another run are cleared, and so are those of a run that
finished (its model was exported; `finished` is written then): a forced rerun trains afresh.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import torch

from workflow_scripts.io_utils import atomic_path, fsync_path, fsync_tree, naming_path

LATEST_POINTER = "latest"
TRAINER_FILE = "trainer.pt"
FILE_SIZES = "files.json"
BEST_FILE = "best.pt"
SIGNATURE_FILE = "run.json"
FINISHED_FILE = "finished"
KEEP_LAST = 2
FULL_DISK_BYTES = 1 << 20  # a failed save with less than this free is reported as a full disk


def run_signature(train_digest: str, model: dict, world_size: int, inputs: dict, **settings) -> dict:
    """What a checkpoint must share with a run to be resumed from: the training settings' digest
    (config/train.py: settings_digest, less the logging keys), the model, the world size, each input file's size and mtime (None = no such
    input) and any other setting that changes what is learnt (the code digest among them)."""
    stamps = {
        name: [os.stat(path).st_size, os.stat(path).st_mtime_ns] for name, path in inputs.items() if path
    }
    return {
        "train": train_digest,
        "model": model,
        "world_size": world_size,
        "inputs": stamps,
        **settings,
    }


def save_tensors(payload: object, path: str | os.PathLike) -> None:
    """torch.save through a Python file, flushed to the disk: a full disk is an OSError naming
    `path` (torch's own writer reports it as a RuntimeError without the file's name)."""
    try:
        with open(path, "wb") as handle:
            torch.save(payload, handle)
            handle.flush()
            os.fsync(handle.fileno())
    except OSError as error:
        raise naming_path(error, path) from None


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
        """Checkpoints of another run (config, data, world size, code) or of a run that finished
        are not resumed from: cleared."""
        path = self.directory / SIGNATURE_FILE
        finished = (self.directory / FINISHED_FILE).exists()
        if path.exists() and json.loads(path.read_text()) == signature and not finished:
            return
        if finished:
            print(f"note: the run in {self.directory} finished (its model was exported): starting afresh")
        elif any(self.directory.iterdir()):
            print(
                f"note: {self.directory} holds checkpoints of another run (config, data, world "
                "size or code differ): starting afresh",
                flush=True,
            )
        for entry in self.directory.iterdir():
            shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
        self._write_durably(path, json.dumps(signature, sort_keys=True) + "\n")

    def mark_finished(self) -> None:
        """Rank 0, after the export: the next run with these checkpoints starts afresh."""
        if self.is_main:
            self._write_durably(self.directory / FINISHED_FILE, "the model was exported\n")

    # ---- saving ---------------------------------------------------------------------------
    def save(self, step: int, trainer_state: dict, write_shards: Callable[[Path], None]) -> Path:
        """Collective: `write_shards(folder)` writes the strategy's files on every rank."""
        final = self.directory / f"step-{step:08d}"
        partial = self.directory / f".{final.name}.partial"
        if self.is_main:
            shutil.rmtree(partial, ignore_errors=True)
            partial.mkdir(parents=True)
        self.barrier()
        try:
            write_shards(partial)
            if self.is_main:
                save_tensors(trainer_state, partial / TRAINER_FILE)
        except (OSError, RuntimeError) as error:
            raise as_disk_error(error, partial) from None
        self.barrier()
        fsync_tree(partial)  # every rank: its own node's writes reach the disk
        self.barrier()
        if self.is_main:
            self._write_durably(partial / FILE_SIZES, json.dumps(file_sizes(partial), sort_keys=True))
            self._publish(partial, final)
        self.barrier()
        return final

    def _publish(self, partial: Path, final: Path) -> None:
        if final.exists():  # a re-save of the same step (after a resume)
            if self._pointed_at() == final:
                self._write_durably(self.directory / LATEST_POINTER, "")
            shutil.rmtree(final)
        os.replace(partial, final)
        fsync_path(self.directory)
        self._write_durably(self.directory / LATEST_POINTER, final.name + "\n")
        self._prune(keep=final)

    def _write_durably(self, path: Path, text: str) -> None:
        """Atomic and on the disk before it counts: written, fsynced, renamed, folder fsynced."""
        with atomic_path(path) as tmp:
            tmp.write_text(text)
            fsync_path(tmp)
        fsync_path(path.parent)

    def save_best(self, model_state: dict) -> None:
        if self.is_main:
            with atomic_path(self.directory / BEST_FILE) as tmp:
                save_tensors(model_state, tmp)

    def load_best(self) -> dict | None:
        path = self.directory / BEST_FILE
        if not path.exists():
            return None
        return torch.load(path, map_location="cpu", weights_only=True)

    def _prune(self, keep: Path) -> None:
        for old in self.complete()[KEEP_LAST:]:
            if old != keep:
                shutil.rmtree(old, ignore_errors=True)
        for stale in self.directory.glob(".step-*.partial"):
            shutil.rmtree(stale, ignore_errors=True)

    # ---- resuming -------------------------------------------------------------------------
    def complete(self) -> list[Path]:
        """Renamed checkpoint folders, newest first."""
        return sorted((p for p in self.directory.glob("step-*") if p.is_dir()), reverse=True)

    def _pointed_at(self) -> Path | None:
        pointer = self.directory / LATEST_POINTER
        name = pointer.read_text().strip() if pointer.exists() else ""
        return self.directory / name if name else None

    def latest_path(self) -> Path | None:
        """The checkpoint `latest` names (None: no checkpoint was completed)."""
        path = self._pointed_at()
        return path if path is not None and (path / TRAINER_FILE).exists() else None

    def resume_candidates(self) -> list[Path]:
        """Every renamed checkpoint folder, newest first (renamed = written and flushed whole;
        `latest` may lag one behind after a crash between the rename and its update)."""
        return self.complete()

    def why_not_loadable(self, path: Path) -> str | None:
        """Why `path` cannot be resumed from (None: its files are all there, whole): a file
        missing or of another size than when it was saved."""
        try:
            expected = json.loads((path / FILE_SIZES).read_text())
        except (OSError, ValueError):
            return f"{FILE_SIZES} is missing or unreadable"
        for name, size in sorted(expected.items()):
            found = (path / name).stat().st_size if (path / name).is_file() else None
            if found != size:
                return f"{name} is {'missing' if found is None else f'{found} bytes, not {size}'}"
        return None

    def load_trainer_state(self, path: Path) -> dict:
        return torch.load(path / TRAINER_FILE, map_location="cpu", weights_only=True)


def file_sizes(folder: Path) -> dict[str, int]:
    return {
        str(path.relative_to(folder)): path.stat().st_size
        for path in sorted(folder.rglob("*"))
        if path.is_file() and path.name != FILE_SIZES
    }


def as_disk_error(error: Exception, folder: Path) -> Exception:
    """A save that failed: an OSError naming the checkpoint folder where it names no file, and
    torch's writer's RuntimeError as the full disk it is when (nearly) no space is left."""
    if isinstance(error, OSError):
        return naming_path(error, folder)
    if shutil.disk_usage(folder.parent).free < FULL_DISK_BYTES:
        return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(folder))
    return error


def capture_rng() -> dict:
    state = {"torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state()
    return state


def restore_rng(state: dict) -> None:
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state(state["cuda"])
