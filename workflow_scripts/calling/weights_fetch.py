"""Get a published base model's weights into the checkout: `make weights` (docs/calling.md).

OpenSpliceAI's 10,000-nt models (five `model_10000nt_rs1{0..4}.pt` per species, GPL-3.0) are
published in its GitHub repository, `models/openspliceai-<species>/10000nt/`; errorseq fetches
them from commit 394109a (the commit whose files `known_models.py` recognises) into
`weights/openspliceai/<species>/` (ignored by git; config/new_genome.yaml reads them there) and
checks each file's sha256 against `openspliceai_weights.sha256` beside this module.

Each file: already there with the right sha256 -> kept (nothing fetched); otherwise copied from
`--from FOLDER` (a folder holding `<species>/model_*.pt`, or the five files themselves) or
downloaded from `--url` (any URL urllib opens: https, http, file), written under a temporary name
in the destination folder, checked, and only then renamed onto its name. A file that cannot be
fetched or whose sha256 differs is refused (the bad bytes never lie under the final name) and the
command ends with one line saying what failed and where to put the files by hand, exit code 1.

    python -m workflow_scripts.calling.weights_fetch [--species arabidopsis] [--from FOLDER]

Standard library only: it runs before the set-up's packages are installed.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import shutil
import sys
import tempfile
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

SUMS = Path(__file__).with_name("openspliceai_weights.sha256")
PUBLISHER = "https://github.com/Kuanhao-Chao/OpenSpliceAI"
COMMIT = "394109a"
URL = f"{PUBLISHER}/raw/{COMMIT}/models/openspliceai-{{species}}/10000nt"
DESTINATION = Path("weights") / "openspliceai"
TIMEOUT_S = 60.0
CHUNK = 1 << 20


class FetchError(Exception):
    """One file could not be had: `what` says why."""


@dataclass(frozen=True)
class WeightFile:
    species: str
    name: str
    sha256: str


def published(species: str, sums: Path = SUMS) -> list[WeightFile]:
    """The files of `species` in the repository's list, in file order."""
    files = []
    for line in sums.read_text().splitlines():
        if line.strip():
            digest, relative = line.split(maxsplit=1)
            folder, name = relative.strip().split("/")
            if folder == species:
                files.append(WeightFile(species, name, digest))
    return files


def species_known(sums: Path = SUMS) -> list[str]:
    return sorted({line.split()[1].split("/")[0] for line in sums.read_text().splitlines() if line.strip()})


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for chunk in iter(lambda: stream.read(CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


@contextlib.contextmanager
def checked_write(target: Path, expected: str) -> Iterator[BinaryIO]:
    """A stream to a temporary file beside `target`; on leaving, its sha256 is checked and only a
    match is renamed onto `target`. Any failure removes the temporary file."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    tmp = Path(name)
    try:
        with os.fdopen(fd, "wb") as stream:
            yield stream
        found = sha256_of(tmp)
        if found != expected:
            raise FetchError(f"sha256 {found}, expected {expected}: refused")
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def source_file(folder: Path, wanted: WeightFile) -> Path:
    """`wanted` in a local folder: FOLDER/<species>/<name>, else FOLDER/<name>."""
    for candidate in (folder / wanted.species / wanted.name, folder / wanted.name):
        if candidate.is_file():
            return candidate
    raise FetchError(f"not in {folder} (nor in {folder / wanted.species})")


def copy_from(folder: Path, wanted: WeightFile, target: Path) -> None:
    source = source_file(folder, wanted)
    with checked_write(target, wanted.sha256) as out, open(source, "rb") as stream:
        shutil.copyfileobj(stream, out, CHUNK)


def download(url: str, wanted: WeightFile, target: Path, timeout: float = TIMEOUT_S) -> None:
    address = f"{url.format(species=wanted.species).rstrip('/')}/{wanted.name}"
    try:
        with urllib.request.urlopen(address, timeout=timeout) as response:
            with checked_write(target, wanted.sha256) as out:
                shutil.copyfileobj(response, out, CHUNK)
    except (urllib.error.URLError, TimeoutError, ConnectionError) as error:
        reason = getattr(error, "reason", error)
        raise FetchError(f"could not download {address} ({reason}): offline?") from error


@dataclass
class Outcome:
    kept: int = 0
    copied: int = 0
    downloaded: int = 0
    failed: list[str] = field(default_factory=list)


def fetch(
    species: str,
    destination: Path = DESTINATION,
    source: Path | None = None,
    url: str | None = URL,
    sums: Path = SUMS,
    timeout: float = TIMEOUT_S,
) -> Outcome:
    """Every file of `species` verified in destination/species: kept, copied or downloaded.
    Without `source`, downloads; after one download fails for the network, the rest are not tried."""
    outcome = Outcome()
    folder = destination / species
    offline = False
    for wanted in published(species, sums):
        target = folder / wanted.name
        if target.is_file() and sha256_of(target) == wanted.sha256:
            outcome.kept += 1
            continue
        try:
            if target.is_file():  # the wrong bytes under the name: fetched again, else gone
                target.unlink()
            if source is not None:
                copy_from(source, wanted, target)
                outcome.copied += 1
            elif url and not offline:
                download(url, wanted, target, timeout)
                outcome.downloaded += 1
            else:
                raise FetchError("not tried (an earlier download failed)")
        except FetchError as error:
            offline = offline or "could not download" in str(error)
            outcome.failed.append(f"{wanted.name}: {error}")
    return outcome


def failure_line(species: str, destination: Path, outcome: Outcome, total: int) -> str:
    """The one line a failed fetch prints: what failed first, where to put the files by hand."""
    failed = outcome.failed
    folder = f"{URL.format(species=species).replace('/raw/', '/tree/')}"
    return (
        f"errorseq: weights: {len(failed)} of {total} OpenSpliceAI {species} files not had: {failed[0]}; "
        f"put model_10000nt_rs10.pt .. rs14.pt (from {folder}) in {destination / species}/ by hand, "
        f"or run `make weights WEIGHTS_FROM=<a folder holding them>` (their sha256: workflow_scripts/calling/{SUMS.name})"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m workflow_scripts.calling.weights_fetch",
        description="Fetch and check OpenSpliceAI's published 10,000-nt models into weights/openspliceai/.",
    )
    parser.add_argument("--species", default="arabidopsis", choices=species_known())
    parser.add_argument("--dest", type=Path, default=DESTINATION, help="default: %(default)s")
    parser.add_argument(
        "--from", dest="source", type=Path, help="copy from this folder instead of downloading"
    )
    parser.add_argument("--url", default=URL, help="the folder URL, {species} filled (default: %(default)s)")
    args = parser.parse_args(argv)
    if args.source is not None and not args.source.is_dir():
        print(f"errorseq: weights: --from {args.source}: not a folder", file=sys.stderr)
        return 2
    total = len(published(args.species))
    outcome = fetch(args.species, args.dest, args.source, args.url)
    if outcome.failed:
        print(failure_line(args.species, args.dest, outcome, total), file=sys.stderr)
        return 1
    print(
        f"weights: {total} OpenSpliceAI {args.species} files in {args.dest / args.species}, sha256 checked "
        f"({outcome.kept} already there, {outcome.copied} copied, {outcome.downloaded} downloaded)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
