"""Read the files the plots draw from, as artifacts.py declares them.

These files are the pipeline's own, so their types and ranges are the writers' guarantee and are
not checked again here. What is still one line naming the file (never a traceback): a file that
is missing or cannot be read, and one without a declared field (e.g. left by an older errorseq).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from workflow_scripts.artifacts import (
    BASELINE_SCORE_PREFIX,
    BUCKET_SUMMARY_FIELDS,
    MANIFEST_PLOT_COLUMNS,
    METRICS_FILE_FIELDS,
    PREDICTION_COLUMNS,
    STEP_LOG,
    TRAIN_RECORD,
    VALIDATION_RECORD,
    RecordKind,
)
from workflow_scripts.errors import InputError


@dataclass
class TrainingLog:
    """steps.jsonl as columns, one array per declared field (kind left out); null becomes NaN."""

    train: dict[str, np.ndarray]
    val: dict[str, np.ndarray]


def existing_file(path) -> Path:
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "file", "does not exist")
    return path


def read_text(path) -> str:
    try:
        return existing_file(path).read_text()
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(path, "file", f"cannot be read ({type(error).__name__})") from None


def require_fields(path, document: dict, fields: tuple[str, ...], where: str = "") -> None:
    missing = [field for field in fields if field not in document]
    if missing:
        raise InputError(
            path,
            missing[0],
            f"{where}missing; was the file written by another errorseq "
            "version? Rerun the rule that writes it",
        )


def read_json_document(path, fields: tuple[str, ...]) -> dict:
    try:
        document = json.loads(read_text(path))
    except json.JSONDecodeError as error:
        raise InputError(path, "file", f"not JSON ({error.msg} at line {error.lineno})") from None
    if not isinstance(document, dict):
        raise InputError(path, "file", "not a JSON object")
    require_fields(path, document, fields)
    return document


def read_table(path, columns: tuple[str, ...], prefix: str | None = None) -> pl.DataFrame:
    """The declared columns, plus every column whose name starts with `prefix` (when given)."""
    existing_file(path)
    try:
        schema = pl.read_parquet_schema(path)
    except (OSError, pl.exceptions.PolarsError) as error:
        raise InputError(path, "file", f"not a readable parquet file ({type(error).__name__})") from None
    require_fields(path, dict(schema), columns)
    extra = [name for name in schema if prefix and name.startswith(prefix) and name not in columns]
    return pl.read_parquet(path, columns=[*columns, *extra])


def read_predictions(path) -> pl.DataFrame:
    """PREDICTION_COLUMNS and the baselines' score columns (BASELINE_SCORE_PREFIX + name)."""
    return read_table(path, PREDICTION_COLUMNS, prefix=BASELINE_SCORE_PREFIX)


def read_manifest(path) -> pl.DataFrame:
    return read_table(path, MANIFEST_PLOT_COLUMNS)


def read_metrics(path) -> dict:
    return read_json_document(path, METRICS_FILE_FIELDS)


def read_bucket_summary(path) -> dict:
    return read_json_document(path, BUCKET_SUMMARY_FIELDS)


def read_step_records(path) -> list[dict]:
    records = []
    for number, line in enumerate(read_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise InputError(path, f"line {number}", f"not JSON ({error.msg})") from None
        kind = STEP_LOG.get(str(record.get("kind"))) if isinstance(record, dict) else None
        if kind is None:
            raise InputError(
                path, f"line {number}", f"not a record kind errorseq writes ({sorted(STEP_LOG)})"
            )
        require_fields(path, record, kind.fields, where=f"line {number}: ")
        records.append(record)
    return records


def as_columns(records: list[dict], kind: RecordKind) -> dict[str, np.ndarray]:
    chosen = [record for record in records if record["kind"] == kind.name]
    return {
        field: np.array([np.nan if record[field] is None else float(record[field]) for record in chosen])
        for field in kind.fields
        if field != "kind"
    }


def read_steps(path) -> TrainingLog:
    records = read_step_records(path)
    return TrainingLog(train=as_columns(records, TRAIN_RECORD), val=as_columns(records, VALIDATION_RECORD))
