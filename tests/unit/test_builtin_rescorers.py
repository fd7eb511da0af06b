"""`sites.transfer: builtin:<name>`: a shipped re-scorer folder (workflow_scripts/rescorers/),
refused in one line for a name not shipped or a key other than sites.transfer."""

from __future__ import annotations

import pytest

from workflow_scripts.config.package_paths import resolve_package_paths
from workflow_scripts.errors import InputError
from workflow_scripts.rescorers import FOLDER, available


def test_a_name_not_shipped_lists_the_shipped_ones():
    with pytest.raises(InputError) as error:
        resolve_package_paths({"sites": {"transfer": "builtin:no-such"}})
    assert error.value.field == "sites.transfer" and "shipped:" in error.value.message


def test_builtin_names_a_rescorer_only_in_sites_transfer():
    with pytest.raises(InputError, match="only in sites.transfer"):
        resolve_package_paths({"calling": {"scores": "builtin:anything"}})


@pytest.mark.parametrize("name", available())
def test_each_shipped_name_resolves_to_its_folder(name):
    resolved = resolve_package_paths({"sites": {"transfer": f"builtin:{name}"}})
    assert resolved["sites"]["transfer"] == str(FOLDER / name)
