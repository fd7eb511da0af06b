"""Pre-flight checks of the input files, run while the workflow is parsed (before any job runs).

A typo in a path, an empty file, a calls table without a required column or a genome that is
not a FASTA fails in seconds with one line naming the file and the config key, not after the
genome was indexed. Only cheap checks: the file exists, is readable and non-empty, a FASTA's
first bytes (gunzipped) are a '>' header, a calls or sequences table's header passes the same
check extract makes (data/calls.py: required columns, no duplicated or reserved names; names
read by data/tables.py, byte-order mark and surrounding blanks removed, in both). The full
checks run in the rules that read the files (index_genome, extract).

Relative paths under results/ are the workflow's own outputs (the demo data): skipped.
"""

from __future__ import annotations

import os
import zlib
from pathlib import Path

from workflow_scripts.calling.contract import SCORE_COLUMNS
from workflow_scripts.calling.model_files import weight_files
from workflow_scripts.data.calls import check_calls_header, check_sequences_header
from workflow_scripts.data.tables import GZIP_MAGIC, require_columns, table_columns
from workflow_scripts.errors import InputError
from workflow_scripts.training.strategies.deepspeed_user import check_user_file

PEEK_BYTES = 1 << 16


def check_input_files(config: dict) -> None:
    """Raise InputError for the first unusable input named by a validated config."""
    if "genome" in config and is_user_file(config["genome"]):
        check_fasta(config["genome"], "genome")
    calling = config["calling"]
    table_keys = (("calls", check_calls_header), ("sequences", check_sequences_header))
    for key, check_header in table_keys[1:] if calling["start"] != "calls" else table_keys:
        if key in config and is_user_file(config[key]):
            check_readable_file(config[key], key)
            check_header(config[key], table_columns(config[key], key))
    check_calling_inputs(calling)
    deepspeed_json = config["train"].get("deepspeed_config")
    if deepspeed_json and is_user_file(deepspeed_json):
        check_readable_file(deepspeed_json, "train.deepspeed_config")
        check_user_file(config["train"])  # valid JSON; the keys train: decides agree with it


def check_calling_inputs(calling: dict) -> None:
    """The annotation, the scores table (calling.start scores) and the model files (annotation)."""
    start = calling["start"]
    if start != "calls" and calling.get("annotation") and is_user_file(calling["annotation"]):
        check_readable_file(calling["annotation"], "calling.annotation")
    if start == "scores" and calling.get("scores") and is_user_file(calling["scores"]):
        check_table(calling["scores"], "calling.scores", SCORE_COLUMNS)
    if start == "annotation" and calling.get("base_model", {}).get("weights"):
        weight_files(calling["base_model"]["weights"])


def is_user_file(path: str) -> bool:
    """False for the workflow's own outputs (relative paths under results/)."""
    parts = Path(path).parts
    return not (parts and parts[0] == "results")


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
