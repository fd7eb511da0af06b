"""`pkg:<package>/<path>` config values resolve to files inside installed packages, or fail in one
line naming the config key."""

from __future__ import annotations

from pathlib import Path

import pytest

import workflow_scripts
from workflow_scripts.config.package_paths import resolve_package_paths
from workflow_scripts.errors import InputError

PACKAGE = Path(workflow_scripts.__file__).parent


def test_pkg_paths_resolve_anywhere_in_the_config_and_other_values_stay():
    config = {
        "genome": "pkg:workflow_scripts/config/package_paths.py",
        "calling": {"base_model": {"weights": "pkg:workflow_scripts/config"}, "region": "chr1:1-10"},
        "list": ["pkg:workflow_scripts/errors.py", 3],
    }
    resolved = resolve_package_paths(config)
    assert resolved["genome"] == str(PACKAGE / "config/package_paths.py")
    assert resolved["calling"] == {"base_model": {"weights": str(PACKAGE / "config")}, "region": "chr1:1-10"}
    assert resolved["list"] == [str(PACKAGE / "errors.py"), 3]


@pytest.mark.parametrize(
    "value, message",
    [
        ("pkg:no_such_package_xyz/data/genome.fa", "package 'no_such_package_xyz' is not installed"),
        ("pkg:workflow_scripts/no/such/file.fa", "does not exist in the installed 'workflow_scripts'"),
        ("pkg:not-a-name/file", "package 'not-a-name' is not installed"),
    ],
)
def test_a_pkg_path_that_names_nothing_fails_naming_the_key(value, message):
    with pytest.raises(InputError, match=message) as refused:
        resolve_package_paths({"calling": {"annotation": value}})
    assert "calling.annotation" in str(refused.value)


@pytest.mark.parametrize(
    "value",
    [
        "pkg:workflow_scripts/../../etc/passwd",
        "pkg:workflow_scripts/config/../../../README.md",
        "pkg:workflow_scripts//etc/passwd",
    ],
)
def test_a_pkg_path_may_not_leave_its_package(value):
    with pytest.raises(InputError) as refused:
        resolve_package_paths({"genome": value})
    assert str(refused.value) == (
        f"config: genome: {value}: leaves the installed 'workflow_scripts' ({PACKAGE}); name a file inside it"
    )


@pytest.mark.parametrize("value", ["pkg:/etc/passwd", "pkg:", "pkg:/"])
def test_a_pkg_path_without_a_package_name_says_so(value):
    with pytest.raises(InputError) as refused:
        resolve_package_paths({"calling": {"annotation": value}})
    assert str(refused.value) == (
        f"config: calling.annotation: {value}: no package name; write pkg:<package>/<path inside it>"
    )
