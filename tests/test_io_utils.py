import os
import subprocess
import sys

import pytest

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
