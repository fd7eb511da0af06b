"""Atomic writes: a killed job never leaves a file that looks complete."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path next to `path`; rename it onto `path` only on success."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    os.chmod(tmp, 0o666 & ~current_umask())  # mkstemp makes 0600; give what open() would
    try:
        with system_errors_naming(target, instead_of=tmp):
            yield tmp
            os.replace(tmp, target)
    finally:
        if tmp.exists():
            tmp.unlink()


@contextlib.contextmanager
def atomic_folder(path: str | os.PathLike) -> Iterator[Path]:
    """Yield an empty temporary folder next to `path`; only on success does it take the place of
    `path` (an older folder there is moved aside, then removed)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    os.chmod(tmp, 0o777 & ~current_umask())  # mkdtemp makes 0700; give what mkdir would
    older = target.parent / f"{tmp.name}.old"
    try:
        with system_errors_naming(target, instead_of=tmp):
            yield tmp
            if target.exists() or target.is_symlink():
                os.replace(target, older)
            os.replace(tmp, target)
    finally:
        for leftover in (tmp, older):
            if leftover.is_dir() and not leftover.is_symlink():
                shutil.rmtree(leftover, ignore_errors=True)
            elif leftover.exists() or leftover.is_symlink():
                leftover.unlink()


OS_ERROR_IN_TEXT = re.compile(r"\(os error (\d+)\)")  # how Rust libraries (polars) report errno


@contextlib.contextmanager
def system_errors_naming(
    path: str | os.PathLike, instead_of: str | os.PathLike | None = None
) -> Iterator[None]:
    """An OSError, or a library error carrying an errno in its text (polars' ComputeError on a full
    disk), re-raised as an OSError naming `path`: run_cli turns it into one line."""
    try:
        yield
    except OSError as error:
        raise naming_path(error, path, instead_of) from None
    except Exception as error:
        found = OS_ERROR_IN_TEXT.search(str(error))
        if found is None:
            raise
        code = int(found[1])
        raise OSError(code, os.strerror(code), str(path)) from None


def naming_path(
    error: OSError, path: str | os.PathLike, instead_of: str | os.PathLike | None = None
) -> OSError:
    """`error` naming `path` where it names no file (a failed write() does not) or `instead_of`."""
    if error.filename is not None and str(error.filename) != str(instead_of):
        return error
    return OSError(error.errno, error.strerror, str(path))


def fsync_path(path: str | os.PathLike) -> None:
    """Flush a file's or a folder's entries to the disk (after writing, before a rename)."""
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def fsync_tree(folder: str | os.PathLike) -> None:
    """fsync every file and folder under `folder`, and `folder` itself."""
    for root, _, files in os.walk(os.fspath(folder)):
        for name in files:
            fsync_path(os.path.join(root, name))
        fsync_path(root)


def sha256_file(path: str | os.PathLike) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_json(path: str | os.PathLike, payload: object) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(payload, indent=2, sort_keys=False) + "\n")


def write_text(path: str | os.PathLike, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text)


def write_parquet(frame, path: str | os.PathLike) -> None:
    """Write a polars DataFrame to parquet atomically."""
    with atomic_path(path) as tmp:
        frame.write_parquet(tmp)
