"""The base model's weight files from `calling.base_model.weights`: a directory or a list of files.

Two SpliceAI-family formats, told apart by content, not by name: Keras 2 `.h5` files (HDF5, as
SpliceAI ships its models) and PyTorch state dicts (`.pt`, a zip archive, as OpenSpliceAI ships
its models). A directory contributes its `*.h5` and `*.pt` files; an ensemble is of one family.

No torch, h5py or polars here: the workflow lists these files (the rule's inputs) and the
preflight checks them while Snakemake parses it, before any job runs.
"""

from __future__ import annotations

from pathlib import Path

from workflow_scripts.errors import InputError

FIELD = "calling.base_model.weights"
KERAS, OPENSPLICEAI = "keras-spliceai", "openspliceai"
SIGNATURES = {b"\x89HDF\r\n\x1a\n": KERAS, b"PK\x03\x04": OPENSPLICEAI}
SUFFIXES = (".h5", ".pt")


def weight_files(spec: str | Path | list) -> list[Path]:
    """A directory (its *.h5 and *.pt files, sorted) or a list of files; each a file, at least one,
    all of one family."""
    if isinstance(spec, (str, Path)):
        folder = Path(spec)
        if not folder.exists():
            raise InputError(
                spec,
                FIELD,
                "not found; give a directory of SpliceAI .h5 or OpenSpliceAI .pt models, or a list of files",
            )
        files = sorted(p for p in folder.iterdir() if p.suffix in SUFFIXES) if folder.is_dir() else [folder]
    else:
        files = [Path(item) for item in spec]
    if not files:
        raise InputError(
            str(spec),
            FIELD,
            "no .h5 or .pt files in this directory" if isinstance(spec, (str, Path)) else "an empty list",
        )
    for path in files:
        if not path.is_file():
            raise InputError(path, FIELD, "file not found" if not path.exists() else "not a regular file")
    model_family(files)
    return files


def file_family(path: Path) -> str:
    """KERAS or OPENSPLICEAI, from the file's first bytes."""
    if not path.is_file():
        raise InputError(path, "file", "not found" if not path.exists() else "not a regular file")
    with open(path, "rb") as handle:
        head = handle.read(8)
    for signature, family in SIGNATURES.items():
        if head.startswith(signature):
            return family
    raise InputError(
        path,
        "file",
        "not an HDF5 file (a Keras .h5 model) nor a zip (a PyTorch state dict): not a base model's weights",
    )


def model_family(files: list[Path]) -> str:
    """The one family of an ensemble's files; a mix is refused naming a file of each."""
    families = {path: file_family(path) for path in files}
    first = files[0]
    for path, family in families.items():
        if family != families[first]:
            raise InputError(
                path,
                FIELD,
                f"a {family} model beside {first.name}, a {families[first]} model: an ensemble is of one family",
            )
    return families[first]
