"""A run directory remembers its config files and refuses a run without them
(workflow_scripts/config/run_directory.py); the real dry runs: tests/workflow/test_run_directory.py."""

from __future__ import annotations

import pytest

from workflow_scripts.config.run_directory import RECORD, check_run_directory
from workflow_scripts.errors import InputError


@pytest.fixture
def checkout(tmp_path):
    (tmp_path / "checkout" / "config").mkdir(parents=True)
    default = tmp_path / "checkout" / "config" / "config.yaml"
    default.write_text("experiments: []\n")
    (tmp_path / "runs" / "x").mkdir(parents=True)
    (tmp_path / "x.yaml").write_text("genome: x.fa\n")
    return default


def test_a_bare_run_where_a_config_file_was_given_is_refused_naming_it(checkout, tmp_path):
    run = tmp_path / "runs" / "x"
    example = str(tmp_path / "x.yaml")
    check_run_directory([str(checkout), example], str(checkout), directory=run)
    with pytest.raises(InputError) as caught:
        check_run_directory([str(checkout)], str(checkout), directory=run)
    assert caught.value.field == "--configfile" and f"given --configfile {example}; without it" in str(
        caught.value
    )
    assert str(RECORD) in caught.value.message
    check_run_directory([str(checkout), example], str(checkout), directory=run)  # given again: fine
    other = tmp_path / "other.yaml"
    other.write_text("train: {epochs: 1}\n")
    check_run_directory([str(checkout), str(other)], str(checkout), directory=run)  # another file: fine


def test_a_directory_never_given_a_config_file_the_checkout_and_maintenance_are_not_refused(
    checkout, tmp_path
):
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    check_run_directory([str(checkout)], str(checkout), directory=fresh)
    home = checkout.parent.parent
    check_run_directory([str(checkout), str(tmp_path / "x.yaml")], str(checkout), directory=home)
    check_run_directory([str(checkout)], str(checkout), directory=home)  # the demo's own place
    assert not (home / RECORD).exists()
    run = tmp_path / "runs" / "x"
    check_run_directory([str(checkout), str(tmp_path / "x.yaml")], str(checkout), directory=run)
    check_run_directory([str(checkout)], str(checkout), ["snakemake", "--unlock"], directory=run)
