"""Content digests of the user's input files: the `inputs` param of the rules that read them.

Snakemake 9 reruns a job when an input is newer than its outputs, or when its params, code, set
of input files or software stack changed (`--rerun-triggers`, all by default). An input replaced
by a file with other content and an older mtime (`cp -p`, `rsync -t`, `tar x`, a restored backup)
is none of these, so its outputs stayed stale ("Nothing to be done"). Snakemake's own input
checksums do not help: it records them only for files under `--max-checksum-file-size` (1 MB)
and uses them only to skip the rerun of a newer input with the same content, never to start one.
A param that holds each user file's sha256 makes a content change a params change: the job and
everything after it rerun, and `snakemake -n` says "params have changed".

Hashing reads the whole file (sha256 ran at 0.35-0.5 GB/s here, blake2b at 0.22: 6-9 s for a
3 GB genome), so a digest is cached in CACHE keyed by the file's size, mtime, inode and ctime. The
kernel sets ctime on every write, rename or metadata change and no user call sets it back, so a
replaced or edited file always misses the cache and is hashed again; a `touch` misses it too but
hashes to the same digest (no rerun). A dry run on unchanged inputs costs a stat per file.
Hashing samples of a file instead would be faster but would miss a one-base edit.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

from workflow_scripts.io_utils import sha256_file, write_json

CACHE = Path(".snakemake") / "errorseq" / "input_digests.json"


def stat_key(path: str) -> list[int]:
    """What changes whenever the file's content can have changed (ctime: no user call sets it)."""
    status = os.stat(path)
    return [status.st_size, status.st_mtime_ns, status.st_ctime_ns, status.st_ino, status.st_dev]


def input_digests(paths: Iterable[str], cache: Path = CACHE) -> str:
    """`path=sha256 ...` for each existing file (a missing one is Snakemake's to report)."""
    paths = [str(path) for path in paths if Path(path).is_file()]
    if not paths:
        return ""
    known = read_cache(cache)
    digests = {path: cached_digest(path, known) for path in paths}
    if any(known.get(os.path.abspath(path)) != entry for path, entry in digests.items()):
        save_cache(cache, {**known, **{os.path.abspath(p): entry for p, entry in digests.items()}})
    return " ".join(f"{path}={entry['sha256']}" for path, entry in digests.items())


def cached_digest(path: str, known: dict) -> dict:
    key, entry = stat_key(path), known.get(os.path.abspath(path))
    if isinstance(entry, dict) and entry.get("key") == key and "sha256" in entry:
        return entry
    return {"key": key, "sha256": sha256_file(path)}


def read_cache(cache: Path) -> dict:
    """The cached digests by absolute path; {} for a missing or damaged cache (all rehashed)."""
    try:
        known = json.loads(cache.read_text())
    except (OSError, ValueError):
        return {}
    return known if isinstance(known, dict) else {}


def save_cache(cache: Path, known: dict) -> None:
    """Atomically; a cache that cannot be written only costs a rehash next time."""
    try:
        write_json(cache, known)
    except OSError:
        pass
