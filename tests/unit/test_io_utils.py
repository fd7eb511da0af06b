import os
import subprocess
import sys

import polars as pl
import pytest

from workflow_scripts.data.tables import ParquetParts
from workflow_scripts.io_utils import atomic_path, write_json


def test_atomic_outputs_get_the_usual_permissions(tmp_path):
    old = os.umask(0o022)
    try:
        write_json(tmp_path / "x.json", {"a": 1})
    finally:
        os.umask(old)
    assert (tmp_path / "x.json").stat().st_mode & 0o777 == 0o644


def test_a_failed_write_leaves_neither_the_file_nor_a_temporary(tmp_path):
    with pytest.raises(RuntimeError):
        with atomic_path(tmp_path / "out.txt") as tmp:
            tmp.write_text("half")
            raise RuntimeError("killed")
    assert list(tmp_path.iterdir()) == []


def test_an_existing_file_is_replaced_only_when_the_write_completes(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old")
    with pytest.raises(RuntimeError):
        with atomic_path(target) as tmp:
            tmp.write_text("new")
            raise RuntimeError("killed")
    assert target.read_text() == "old"


FULL_DISK_WRITE = """
import resource, signal, sys
import numpy as np, polars as pl
from workflow_scripts.data.tables import ParquetParts
from workflow_scripts.errors import run_cli
from workflow_scripts.io_utils import write_parquet

signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the write fails with EFBIG, as a full disk fails with ENOSPC
resource.setrlimit(resource.RLIMIT_FSIZE, (20_000, 20_000))
frame = pl.DataFrame({"score": np.random.default_rng(0).random(100_000)})

def write(argv):
    if sys.argv[1] == "parts":
        with ParquetParts(sys.argv[2], frame.head(0)) as parts:
            parts.add(frame)
            parts.close()
    else:
        write_parquet(frame, sys.argv[2])

run_cli(write)
"""


@pytest.mark.parametrize("writer", ["table", "parts"])
def test_a_parquet_write_the_system_refuses_is_one_line(tmp_path, writer):
    """polars reports a full disk as a ComputeError ('... (os error 28)'): it was a traceback."""
    out = tmp_path / "scores.parquet"
    result = subprocess.run(
        [sys.executable, "-c", FULL_DISK_WRITE, writer, str(out)], capture_output=True, text=True
    )
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip() == f"errorseq: error: {out}: EFBIG: File too large"
    assert list(tmp_path.iterdir()) == []


PARTS_THEN_WAIT = """
import sys, time
import polars as pl
from workflow_scripts.data.tables import ParquetParts
from workflow_scripts.errors import run_cli

def write(argv):
    with ParquetParts(sys.argv[1], pl.DataFrame({"a": []}, schema={"a": pl.Int64})) as parts:
        parts.add(pl.DataFrame({"a": [1, 2, 3]}))
        print("part written", flush=True)
        # Short sleeps, as a job's main thread between steps: a signal the kernel hands to one of
        # polars' threads does not interrupt a long sleep, so its handler would wait for the end.
        for _ in range(600):
            time.sleep(0.1)
        parts.close()

run_cli(write)
"""


def start_writer(out):
    process = subprocess.Popen(
        [sys.executable, "-c", PARTS_THEN_WAIT, str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout.readline().strip() == "part written"
    return process


def test_a_terminated_writer_leaves_no_parts_folder(tmp_path):
    """Snakemake and SLURM stop jobs with SIGTERM: the parts folder (up to ~100 MB a part) stayed."""
    out = tmp_path / "scores.parquet"
    writer = start_writer(out)
    assert [p.name.startswith(".scores.parquet.parts.") for p in tmp_path.iterdir()] == [True]
    writer.terminate()
    assert writer.wait(timeout=30) == 143
    assert "stopped by SIGTERM" in writer.stderr.read()
    assert list(tmp_path.iterdir()) == []


def test_parts_of_a_killed_writer_are_removed_by_the_next(tmp_path):
    out = tmp_path / "scores.parquet"
    killed = start_writer(out)
    killed.kill()
    killed.wait(timeout=30)
    stale = list(tmp_path.iterdir())
    assert len(stale) == 1
    with ParquetParts(out, pl.DataFrame({"a": [1]})) as parts:
        parts.close()
    assert list(tmp_path.iterdir()) == [out]
