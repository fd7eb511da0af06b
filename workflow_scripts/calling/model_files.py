"""The base model's weight files from `calling.base_model.weights`: a directory or a list of .h5 files.

No torch, h5py or polars here: the workflow lists these files (the rule's inputs) and the
preflight checks them while Snakemake parses it, before any job runs.
"""

from __future__ import annotations

from pathlib import Path

from workflow_scripts.errors import InputError

FIELD = "calling.base_model.weights"


def weight_files(spec: str | Path | list) -> list[Path]:
    """A directory (its *.h5 files, sorted) or a list of .h5 files; each must be a file, at least one."""
    if isinstance(spec, (str, Path)):
        folder = Path(spec)
        if not folder.exists():
            raise InputError(
                spec, FIELD, "not found; give a directory of Keras .h5 models or a list of files"
            )
        files = sorted(folder.glob("*.h5")) if folder.is_dir() else [folder]
    else:
        files = [Path(item) for item in spec]
    if not files:
        raise InputError(
            str(spec),
            FIELD,
            "no .h5 files in this directory" if isinstance(spec, (str, Path)) else "an empty list",
        )
    for path in files:
        if not path.is_file():
            raise InputError(path, FIELD, "file not found" if not path.exists() else "not a regular file")
    return files
