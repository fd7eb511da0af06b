"""The facts of a user's input file, written by the job that reads it, beside what it makes.

Provenance travels with the data: index_genome writes the FASTA's record (results/genome/
record.json), annotate_sites puts the annotation's in its summary.json (`annotation`) and each
score_base_model shard the weights' in its regions.json (`weights`). site_calls, rescore_sites and
summarize read those records among their declared inputs (evaluation/provenance.py): no job reads
the workflow's config or the user's files behind its declaration.

    FileRecord   path (the file's name, never this machine's folders), bytes, sha256 (of the
                 file as stored: a .gz is hashed compressed) and packages ({distribution:
                 version} of the installed package the file lies in, a `pkg:` path; {} elsewhere)
    weights      source "weights", files (a FileRecord each), and describe_weights' family,
                 species, flank, models, identical_files and distinct_models

Only the standard library and errorseq's light modules: index_genome and annotate_sites import it.
"""

from __future__ import annotations

import json
from importlib import metadata
from pathlib import Path

from workflow_scripts.calling.known_models import describe_weights
from workflow_scripts.calling.model_files import model_family
from workflow_scripts.errors import InputError
from workflow_scripts.io_utils import sha256_file

WEIGHTS = "weights"


def installed_version(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def holding_package(path: str | Path) -> dict[str, str | None]:
    """{distribution: version} of the installed package whose folder holds `path` ({} elsewhere)."""
    parts = Path(path).resolve().parts
    owners = metadata.packages_distributions()
    for index, part in enumerate(parts[:-1]):
        if part in ("site-packages", "dist-packages"):
            return {name: installed_version(name) for name in owners.get(parts[index + 1], [])}
    return {}


def file_record(path: str | Path, packages: bool = True) -> dict:
    """The FileRecord of an input file (module docstring); `packages` False: without them."""
    if not Path(path).is_file():
        raise InputError(path, "record", "input file not found; its sha256 goes into the provenance")
    record = {"path": Path(path).name, "bytes": Path(path).stat().st_size, "sha256": sha256_file(path)}
    return {**record, "packages": holding_package(path)} if packages else record


def weights_record(paths: list[Path]) -> dict:
    """The base model's weights as a shard's regions.json holds them (module docstring)."""
    files = [file_record(path, packages=False) for path in paths]
    return {"source": WEIGHTS, "files": files, **describe_weights(files, model_family(paths))}


def read_record(path: str | Path, key: str) -> dict:
    """The record `key` of a JSON file a job wrote (genome record.json: fasta; annotate_sites'
    summary.json: annotation; a shard's regions.json: weights)."""
    try:
        found = json.loads(Path(path).read_text())[key]
    except (OSError, json.JSONDecodeError, KeyError, TypeError) as error:
        raise InputError(
            path, key, f"no record of its input here ({error!r}): rerun the job that writes it"
        ) from None
    if not isinstance(found, dict):
        raise InputError(path, key, "not a record (a JSON object)")
    return found


def weights_of_shards(paths: list[str]) -> dict | None:
    """The weights every shard's regions.json records (the same in each), None without shards."""
    found = [read_record(path, WEIGHTS) for path in paths]
    for path, other in zip(paths[1:], found[1:], strict=True):
        if other != found[0]:
            raise InputError(
                path, WEIGHTS, f"other weights than {Path(paths[0]).name}: shards of two base models"
            )
    return found[0] if found else None
