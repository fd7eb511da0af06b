"""Pre-flight checks of the input files, run while the workflow is parsed (before any job runs).

A typo in a path, an empty file, a calls table without a required column or a genome that is
not a FASTA fails in seconds with one line naming the file and the config key, not after the
genome was indexed. Only cheap checks: the file exists, is readable and non-empty, a FASTA's
first bytes (gunzipped) are a '>' header, a calls or sequences table's header passes the same
check extract makes (data/calls.py: required columns, no duplicated or reserved names; names
read by data/tables.py, byte-order mark and surrounding blanks removed, in both). The full
checks run in the rules that read the files (index_genome, extract).

No input may lie inside this run's own outputs (results/ and logs/ of the working directory, where
every rule writes), apart from the demo data that demo_data makes: Snakemake deletes a job's
outputs before it runs, so an input there (sites.transfer naming site_calls' own rescorer) would be
destroyed before anything reads it. This check runs before the DAG is built, so before any of
Snakemake's output cleaning. The demo's outputs (relative paths under results/) are then skipped.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Iterator
from pathlib import Path

from workflow_scripts import layout
from workflow_scripts.calling.contract import SCORE_COLUMNS
from workflow_scripts.calling.model_files import weight_files
from workflow_scripts.data.calls import check_calls_header, check_sequences_header
from workflow_scripts.data.tables import GZIP_MAGIC, require_columns, table_columns
from workflow_scripts.errors import InputError
from workflow_scripts.training.strategies.deepspeed_user import check_user_file

PEEK_BYTES = 1 << 16


OUTPUT_FOLDERS = ("results", "logs")  # under the working directory: every output, log and benchmark
DEMO_OUTPUTS = ("results/demo/genome.fa.gz", "results/demo/calls.tsv")  # rules/demo.smk, config.yaml
USER_PATH_KEYS = (  # every config value that names a file or folder errorseq reads
    "genome",
    "calls",
    "sequences",
    "calling.annotation",
    "calling.scores",
    "calling.base_model.weights",
    "calling.regions",
    "sites.transfer",
    "tokenizer.path",
    "model.path",
    "train.deepspeed_config",
    "train_base.init_weights",
    "predict.calls",
    "predict.genome",
)


def user_input_paths(config: dict) -> Iterator[tuple[str, str]]:
    """(key, path) of every input path the config names (a list, as base model weights: each)."""
    for key in USER_PATH_KEYS:
        value: object = config
        for part in key.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        for path in value if isinstance(value, list) else [value]:
            if isinstance(path, str) and path:
                yield key, path


def check_inputs_outside_outputs(config: dict, workdir: str | Path = ".") -> None:
    """InputError for the first input path inside `workdir`'s results/ or logs/ (symbolic links
    and '..' resolved), except the demo's own data."""
    base = Path(os.path.realpath(workdir))
    folders = [Path(os.path.realpath(base / name)) for name in OUTPUT_FOLDERS]
    demo = {Path(os.path.realpath(base / path)) for path in DEMO_OUTPUTS}
    for key, path in user_input_paths(config):
        if key == "calling.base_model.weights" and layout.names_train_base_models(path):
            continue  # train_base writes them in this run
        resolved = Path(os.path.realpath(base / path))
        inside = next((folder for folder in folders if resolved.is_relative_to(folder)), None)
        if inside is not None and resolved not in demo:
            raise InputError(
                path,
                key,
                f"lies inside this run's own outputs ({inside}), which the workflow writes and "
                "deletes before rerunning a job; copy it outside results/ and logs/ or run in another --directory",
            )


def check_input_files(config: dict) -> None:
    """Raise InputError for the first unusable input named by a validated config."""
    check_inputs_outside_outputs(config)
    if "genome" in config and is_user_file(config["genome"]):
        check_fasta(config["genome"], "genome")
    calling = config["calling"]
    table_keys = (("calls", check_calls_header), ("sequences", check_sequences_header))
    for key, check_header in table_keys[1:] if calling["start"] != "calls" else table_keys:
        if key in config and is_user_file(config[key]):
            check_readable_file(config[key], key)
            check_header(config[key], table_columns(config[key], key))
    check_calling_inputs(calling)
    check_base_inputs(config)
    transfer = config.get("sites", {}).get("transfer")
    if transfer and calling["start"] != "calls":
        check_exists(transfer, "sites.transfer")
        check_transfer_rescorer(transfer, config)
    deepspeed_json = config["train"].get("deepspeed_config")
    if deepspeed_json and is_user_file(deepspeed_json):
        check_readable_file(deepspeed_json, "train.deepspeed_config")
        check_user_file(config["train"])  # valid JSON; the keys train: decides agree with it


def check_transfer_rescorer(path: str, config: dict) -> None:
    """sites.transfer: the re-scorer folder's manifest and every file's sha256, the values and
    headers inside (sites/rescorer_checks.py, file_headers.py), its settings and the tree's
    feature count against this run (sites/rescorer_manifest.py), and the base model it corrects
    against this run's weights, by sha256 (sites/base_match.py), before score_base_model runs;
    the job checks it all again, with the tree's nodes and the deep models' tensors."""
    from workflow_scripts.config.sections import complete_section
    from workflow_scripts.sites.base_match import check_same_base
    from workflow_scripts.sites.candidates import feature_names  # polars: only with sites.transfer
    from workflow_scripts.sites.rescorer_manifest import FEATURE_SETTINGS, read_manifest

    sites, calling = complete_section("sites", config["sites"]), config["calling"]
    here = {key: calling[key] if key == "consensus_window" else sites[key] for key in FEATURE_SETTINGS}
    found = read_manifest(path, here, len(feature_names(sites["flank"])))
    check_same_base(found.document["source"].get("base_model"), run_base_model(calling), found.source)


def run_base_model(calling: dict) -> dict | None:
    """This run's base model as provenance records it (the weights' sha256), where the config
    names its weights: calling.start annotation or regions, or scores made by named weights."""
    from workflow_scripts.calling.model_files import weight_files
    from workflow_scripts.evaluation.provenance import SCORES_GIVEN
    from workflow_scripts.evaluation.records import weights_record

    weights = calling.get("base_model", {}).get("weights")
    if not weights or calling["start"] not in ("annotation", "regions", "scores"):
        return None
    facts = weights_record(weight_files(weights))
    return {"source": SCORES_GIVEN, "made_by": facts} if calling["start"] == "scores" else facts


def check_calling_inputs(calling: dict) -> None:
    """The annotation, the scores table (calling.start scores), the model files (annotation,
    regions) and the BED of regions (regions)."""
    start = calling["start"]
    if start != "calls" and calling.get("annotation") and is_user_file(calling["annotation"]):
        check_readable_file(calling["annotation"], "calling.annotation")
    if start == "scores" and calling.get("scores") and is_user_file(calling["scores"]):
        check_table(calling["scores"], "calling.scores", SCORE_COLUMNS)
    weights = calling.get("base_model", {}).get("weights")
    if start in ("annotation", "regions") and weights and not layout.names_train_base_models(weights):
        weight_files(weights)
    if start in ("annotation", "regions") and calling.get("regions") and is_user_file(calling["regions"]):
        check_readable_file(calling["regions"], "calling.regions")


def check_base_inputs(config: dict) -> None:
    """base_data (enabled, or needed by evaluate_base) needs a genome and an annotation; each of
    evaluate_base.models a folder of OpenSpliceAI .pt files (docs/base_training.md)."""
    folders = config.get("evaluate_base", {}).get("models", [])
    if not (config.get("base_data", {}).get("enabled") or folders):
        return
    for key, present in (
        ("genome", "genome" in config),
        ("calling.annotation", config["calling"].get("annotation")),
    ):
        if not present:
            raise InputError(
                "config", key, "base_data builds the base model's data from the genome and its annotation"
            )
    for folder in folders:
        if not is_user_file(folder):
            continue  # made by this run (train_base's models)
        check_exists(folder, "evaluate_base.models")
        if not Path(folder).is_dir() or not any(Path(folder).glob("*.pt")):
            raise InputError(folder, "evaluate_base.models", "a folder of OpenSpliceAI .pt models is needed")


def is_user_file(path: str) -> bool:
    """False for the workflow's own outputs (relative paths under results/)."""
    parts = Path(path).parts
    return not (parts and parts[0] == "results")


def check_exists(path: str, key: str) -> None:
    """A file or folder that is there and readable (its format is checked where it is read)."""
    target = Path(path)
    if not target.exists():
        raise InputError(path, key, f"not found (relative paths start at {Path.cwd()})")
    if not os.access(target, os.R_OK):
        raise InputError(path, key, "not readable (check its permissions)")


def check_readable_file(path: str, key: str) -> None:
    target = Path(path)
    if not target.exists():
        raise InputError(path, key, f"file not found (relative paths start at {Path.cwd()})")
    if not target.is_file():
        raise InputError(path, key, "not a regular file")
    if not os.access(target, os.R_OK):
        raise InputError(path, key, "not readable (check its permissions)")
    if target.stat().st_size == 0:
        raise InputError(path, key, "file is empty")


def peek(path: str, key: str) -> bytes:
    """The first bytes of a file, gunzipped when it starts with the gzip magic."""
    with open(path, "rb") as handle:
        head = handle.read(PEEK_BYTES)
    if not head.startswith(GZIP_MAGIC):
        return head
    try:
        return zlib.decompressobj(wbits=31).decompress(head, PEEK_BYTES)
    except zlib.error as error:
        raise InputError(path, key, f"corrupt gzip data ({error})") from None


def check_fasta(path: str, key: str) -> None:
    check_readable_file(path, key)
    head = peek(path, key).lstrip()
    if not head:
        raise InputError(path, key, "file is empty")
    if not head.startswith(b">"):
        raise InputError(path, key, "no '>' header before sequence data; is this a FASTA file?")


def check_table(path: str, key: str, required: tuple[str, ...]) -> None:
    check_readable_file(path, key)
    require_columns(path, table_columns(path, key), required)


NVIDIA_CONTROL_DEVICE = Path("/dev/nvidiactl")  # present where the NVIDIA driver is loaded


def nvidia_gpu_present() -> bool:
    """Whether this machine has an NVIDIA GPU, without importing torch while the DAG is built."""
    return NVIDIA_CONTROL_DEVICE.exists()


def local_gpu_resource(wildcards) -> int:
    """score_base_model's `gpu` resource, decided per job when Snakemake plans it (not when the
    workflow is parsed): 1 where the NVIDIA driver is loaded, else 0, so a CPU-only run does not
    show gpu=1. The SLURM profile's set-resources gives cluster jobs their own."""
    return int(nvidia_gpu_present())
