"""The re-scorer folder's manifest, rescorer.json, read and checked with the standard library
alone (the workflow checks sites.transfer with it while Snakemake parses, before any job).

    format, version   FORMAT and VERSION
    settings          the source's FEATURE_SETTINGS: this run's must be the same
    thresholds        {base_tuned | tree (| errorseq): {donor, acceptor: number, or null for none}}
    tree              file (the arrays, sites/tree_arrays.py) with n_features and trees, or
                      file null and constant (the source's candidates were of one class)
    deep_models       [{weights: fold<i>.safetensors, config: fold<i>.json}] (sites.model), or []
    source            the source genome: source (its chromosomes), source_sites, ... and
                      base_model (as provenance.json's: source, files with sha256, family, ...)
    packages          the versions that wrote it
    results           what site_calls measured there (site_metrics.json: answer, counts, F1s)
    files             {name: sha256} of every other file of the folder
    manifest_sha256   the sha256 of all the above (sites/rescorer_checks.py)

`read_manifest` refuses, each in one line naming the file and the field: a path that is no such
folder (a pickle without reading past its first bytes), JSON that is cut short or of another
kind, a field of the wrong type, a file the manifest lists that is missing or whose sha256
differs (each file is read once: the bytes hashed are the bytes used), a file it does not list
(but the empty marker Snakemake leaves in an output folder),
settings other than this run's, and a tree of another feature count than this run builds; the
values inside (sites/rescorer_checks.py: types and ranges, the manifest's own sha256, each fold's
model.json) and the headers of the binary files (file_headers.py: tree.npz's arrays, each
safetensors' tensors, their sizes against the bytes the file holds, nothing allocated), so the
workflow refuses them while it parses, before any job.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from workflow_scripts.errors import InputError
from workflow_scripts.file_headers import npz_headers, safetensors_header
from workflow_scripts.json_fields import described, exact_keys, field, typed
from workflow_scripts.sites.rescorer_checks import (
    DIGEST,
    check_digest,
    check_fold_config,
    check_results,
    check_source,
    check_thresholds,
    check_tree_counts,
)

FORMAT, VERSION = "errorseq-site-rescorer", 3
MANIFEST, TREE_FILE = "rescorer.json", "tree.npz"
FEATURE_SETTINGS = ("flank", "floor", "peak_radius", "consensus_window")  # sites.*, calling.*
TOP_KEYS = {
    "format",
    "version",
    "settings",
    "thresholds",
    "tree",
    "deep_models",
    "source",
    "packages",
    "results",
    "files",
}
SNAKEMAKE_MARKER = ".snakemake_timestamp"  # the empty file Snakemake leaves in a directory() output
FILE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
PICKLE = re.compile(rb"\x80[\x02-\x05]")  # the opening of a pickle of protocol 2 to 5
CONVERT = "python -m workflow_scripts.sites.convert_rescorer OLD.pkl NEW_FOLDER"


@dataclass(frozen=True)
class Manifest:
    folder: Path
    document: dict  # rescorer.json, every field checked
    contents: dict[str, bytes]  # every other file, its sha256 checked

    @property
    def source(self) -> str:
        return str(self.folder / MANIFEST)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_manifest(path: str, here: dict, n_features: int) -> Manifest:
    """The folder at `path`, its manifest and files checked against this run: `here` holds its
    FEATURE_SETTINGS, `n_features` the count of the features it builds for the tree."""
    folder = checked_folder(path)
    source = str(folder / MANIFEST)
    document = parse_json(read_bytes(folder / MANIFEST), source)
    check_format(document, source)
    check_digest(document, source)
    exact_keys(document, TOP_KEYS | ({DIGEST} & set(document)), source, "rescorer")
    contents = checked_files(folder, field(document, "files", dict, source), source)
    check_settings(field(document, "settings", dict, source), here, source)
    check_tree(field(document, "tree", dict, source), contents, n_features, source)
    for number, entry in enumerate(field(document, "deep_models", list, source)):
        where = f"deep_models[{number}]"
        exact_keys(typed(entry, dict, source, where), {"weights", "config"}, source, where)
        weights = listed_file(entry["weights"], contents, source, f"{where}.weights")
        safetensors_header(weights, str(folder / entry["weights"]))
        config = listed_file(entry["config"], contents, source, f"{where}.config")
        check_fold_config(parse_json(config, str(folder / entry["config"])), str(folder / entry["config"]))
    check_thresholds(field(document, "thresholds", dict, source), source)
    check_source(field(document, "source", dict, source), source)
    field(document, "packages", dict, source)
    check_results(field(document, "results", dict, source), source)
    return Manifest(folder, document, contents)


def check_tree(part: dict, contents: dict[str, bytes], n_features: int, source: str) -> None:
    exact_keys(part, {"file", "n_features", "trees", "constant"}, source, "tree")
    check_tree_counts(part, source)
    if part["file"] is None:
        constant = field(part, "constant", float, source, "tree")
        if not 0 <= constant <= 1:
            raise InputError(source, "tree.constant", f"{constant}: want a probability")
        return
    from workflow_scripts.sites.tree_arrays import check_headers  # numpy: only with a tree

    data = listed_file(part["file"], contents, source, "tree.file")
    path = str(Path(source).parent / part["file"])
    check_headers(npz_headers(data, path, "tree"), part["trees"], path)
    found = field(part, "n_features", int, source, "tree")
    if found != n_features:
        raise InputError(
            source,
            "tree.n_features",
            f"the tree takes {found} features, this run builds {n_features}: the source was "
            "written by an errorseq that built other features; rerun site_calls there",
        )


def checked_folder(path: str) -> Path:
    """`path` as a re-scorer folder; a file (a pickle above all) is refused without being read
    further than its first bytes."""
    target = Path(path)
    if not target.exists():
        raise InputError(
            path, "sites.transfer", "not found: want another genome's results/sites/rescorer folder"
        )
    if target.is_dir():
        if not (target / MANIFEST).is_file():
            raise InputError(path, MANIFEST, "missing: not a site_calls re-scorer folder")
        return target
    with open(target, "rb") as handle:
        head = handle.read(2)
    if PICKLE.match(head):
        raise InputError(
            path,
            "sites.transfer",
            "a pickle (the rescorer.pkl older errorseq versions wrote): refused unread, a pickle can run "
            f"code; convert one you wrote yourself, once, with `{CONVERT}`",
        )
    raise InputError(path, "sites.transfer", "a file: want a re-scorer folder (results/sites/rescorer)")


def read_bytes(path: Path) -> bytes:
    if not path.is_file():
        raise InputError(path, "file", "missing or not a regular file")
    return path.read_bytes()


def parse_json(data: bytes, source: str) -> dict:
    try:
        document = json.loads(data)
    except (UnicodeDecodeError, ValueError) as error:
        raise InputError(source, "json", f"not JSON, or cut short ({error})") from None
    return typed(document, dict, source, "json")


def check_format(document: dict, source: str) -> None:
    found = document.get("format")
    if found != FORMAT:
        older = isinstance(found, str) and found.startswith(FORMAT)
        raise InputError(
            source,
            "format",
            f"{found!r}: "
            + (
                "written by an older errorseq: rerun site_calls on the source genome"
                if older
                else f"not an errorseq site re-scorer (want {FORMAT!r})"
            ),
        )
    version = field(document, "version", int, source)
    if version != VERSION:
        raise InputError(
            source,
            "version",
            f"{version}: this errorseq reads version {VERSION}; rerun site_calls on the source genome "
            "with this errorseq",
        )


def checked_files(folder: Path, listed: dict, source: str) -> dict[str, bytes]:
    """Every file the manifest lists, read once and matching its sha256; no other file."""
    for name, digest in listed.items():
        if not FILE_NAME.fullmatch(name) or name == MANIFEST:
            raise InputError(source, f"files.{name}", "not a plain file name of this folder")
        if not (isinstance(digest, str) and re.fullmatch(r"[0-9a-f]{64}", digest)):
            raise InputError(
                source, f"files.{name}", f"want a sha256 (64 hex digits), found {described(digest)}"
            )
    present = {entry.name for entry in folder.iterdir()} - {MANIFEST, SNAKEMAKE_MARKER}
    for name in sorted(present - set(listed)):
        raise InputError(folder / name, "files", f"not listed in {MANIFEST}: an unknown file, refused")
    contents = {}
    for name, digest in listed.items():
        path = folder / name
        if name not in present:
            raise InputError(path, "files", f"missing: {MANIFEST} lists it")
        data = read_bytes(path)
        if sha256(data) != digest:
            raise InputError(
                path,
                "sha256",
                f"differs from the one in {MANIFEST}: the file changed after site_calls wrote it",
            )
        contents[name] = data
    return contents


def listed_file(name: object, contents: dict[str, bytes], source: str, where: str) -> bytes:
    name = typed(name, str, source, where)
    if name not in contents:
        raise InputError(source, where, f"{name!r} is not among the files")
    return contents[name]


def check_settings(chosen: dict, here: dict, source: str) -> None:
    """The source's FEATURE_SETTINGS against this run's (`here`)."""
    exact_keys(chosen, set(FEATURE_SETTINGS), source, "settings")
    for key in FEATURE_SETTINGS:
        value = field(chosen, key, int if key != "floor" else float, source, "settings")
        if value != here[key]:
            raise InputError(
                source,
                f"settings.{key}",
                f"the source genome used sites/calling {key} {value}, this run {here[key]}: "
                "the tree's features would differ",
            )
