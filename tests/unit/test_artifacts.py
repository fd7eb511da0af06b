"""artifacts.py is what the writers write: the step log refuses other records, the bucket rule's
summary.json has exactly the declared fields."""

import json

import pytest

from tests.evaluation_fixtures import make_windows, train_record, validation_record, write_buckets
from workflow_scripts.artifacts import (
    BUCKET_ROW_FIELDS,
    BUCKET_SUMMARY_FIELDS,
    PADDING_EFFICIENCY_FIELDS,
    TRAIN_RECORD,
    VALIDATION_RECORD,
)
from workflow_scripts.training.telemetry import StepLog


def test_step_log_writes_declared_records(tmp_path):
    log = StepLog(tmp_path / "steps.jsonl", enabled=True)
    log.write(train_record(epoch=1, step=5, gpu=False))
    log.write(validation_record(epoch=1, step=5))
    lines = [json.loads(line) for line in (tmp_path / "steps.jsonl").read_text().splitlines()]
    assert [set(line) for line in lines] == [set(TRAIN_RECORD.fields), set(VALIDATION_RECORD.fields)]


@pytest.mark.parametrize(
    "change, message",
    [
        (
            lambda r: {**r, "elapsed_s": 1.0},
            r"undeclared \['elapsed_s'\]",
        ),  # a field the reader does not know
        (lambda r: {k: v for k, v in r.items() if k != "step_s"}, r"missing \['step_s'\]"),
        (lambda r: {**r, "loss": None}, r"\['loss'\] must not be null"),
        (lambda r: {**r, "kind": "checkpoint"}, "unknown record kind 'checkpoint'"),
    ],
)
def test_step_log_refuses_records_outside_the_contract_on_every_rank(tmp_path, change, message):
    for enabled in (True, False):  # rank 0 writes, the other ranks check too
        log = StepLog(tmp_path / f"steps{enabled}.jsonl", enabled=enabled)
        with pytest.raises(ValueError, match=message):
            log.write(change(train_record(epoch=1, step=5, gpu=True)))


def test_bucket_summary_has_the_declared_fields(tmp_path):
    paths = write_buckets(make_windows(tmp_path / "windows.parquet", n=120), tmp_path)
    summary = json.loads(paths["bucket_summary"].read_text())
    assert set(summary) == set(BUCKET_SUMMARY_FIELDS)
    assert all(set(row) == set(BUCKET_ROW_FIELDS) for row in summary["buckets"])
    assert set(summary["padding_efficiency"]) == set(PADDING_EFFICIENCY_FIELDS)
