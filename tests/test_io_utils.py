import os

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
