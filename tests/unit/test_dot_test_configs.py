"""The tests' config files in .test/: each one valid over config/config.yaml, each one used."""

import re

import pytest
import yaml

from tests.workflow_helpers import ROOT, TEST_CONFIGS, merged_config, stacked_config
from workflow_scripts.config.sections import schema
from workflow_scripts.config.validate import validate_config

NAMES = sorted(path.stem.removeprefix("config-") for path in TEST_CONFIGS.glob("config-*.yaml"))


@pytest.mark.parametrize("name", NAMES)
def test_each_config_is_valid_over_the_workflow_config(name):
    workflow_config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    validate_config(merged_config(workflow_config, stacked_config(name)), schema())


def test_each_config_is_stacked_by_some_test():
    sources = "".join(path.read_text() for path in (ROOT / "tests").rglob("*.py"))
    used = {
        name
        for call in re.findall(r"stacked_config\(([^)]*)\)", sources)
        for name in re.findall(r'"([\w-]+)"', call)
    }
    assert set(NAMES) <= used, f"not used by any test: {sorted(set(NAMES) - used)}"


def test_stacking_merges_mappings_and_replaces_lists():
    base = {"train": {"epochs": 4, "lr": 0.006}, "experiments": [{"name": "a"}, {"name": "b"}]}
    override = {"train": {"epochs": 1}, "experiments": [{"name": "c"}]}
    assert merged_config(base, override) == {
        "train": {"epochs": 1, "lr": 0.006},
        "experiments": [{"name": "c"}],
    }
    assert base["train"] == {"epochs": 4, "lr": 0.006}  # the base is left as it was
    assert stacked_config("tiny", "folds")["train"] == {"epochs": 1, "lr": 0.006, "log_every_steps": 5}
