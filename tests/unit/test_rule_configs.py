"""workflow/rule_configs.py: each rule's --config holds the keys it reads and no others, so a
change to another key leaves its params (and so its outputs) as they are."""

from __future__ import annotations

import copy
import json

import yaml

from tests.workflow_helpers import ROOT
from workflow_scripts.config.sections import schema
from workflow_scripts.config.validate import validate_config
from workflow_scripts.workflow import rule_configs


def demo_config(**changes: dict) -> dict:
    """config/config.yaml as the workflow validates it, with `changes` merged per section."""
    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    for section, values in changes.items():
        config[section] = {**config.get(section, {}), **values}
    return validate_config(config, schema())


def test_a_calling_rule_gets_only_its_keys():
    config = demo_config()
    for rule, keys in rule_configs.CALLING_KEYS.items():
        sections = json.loads(rule_configs.calling_config(config, rule))
        assert list(sections) == ["calling"] and set(sections["calling"]) <= set(keys), rule
    moved = demo_config(calling={"threshold": 0.3})
    assert rule_configs.calling_config(moved, "annotate_sites") == rule_configs.calling_config(
        config, "annotate_sites"
    )
    assert rule_configs.calling_config(moved, "make_calls") != rule_configs.calling_config(
        config, "make_calls"
    )


def test_site_rules_read_their_keys():
    config = demo_config()
    other = copy.deepcopy(config)
    other["sites"]["bootstrap_replicates"] += 1  # the intervals: site_calls only
    assert rule_configs.site_windows_config(other) == rule_configs.site_windows_config(config)
    assert rule_configs.site_calls_config(other, False) != rule_configs.site_calls_config(config, False)
    windows = json.loads(rule_configs.site_windows_config(config))
    assert set(windows["sites"]) == set(rule_configs.SITE_WINDOWS_SITES_KEYS)
    assert windows["split"] == {"fractions": config["split"]["fractions"]}


def test_site_calls_reads_the_batch_size_only_with_sites_model():
    config = demo_config()
    off = json.loads(rule_configs.site_calls_config(config, site_model=False))
    on = json.loads(rule_configs.site_calls_config(config, site_model=True))
    assert off["evaluate"] == {"kmer_max_k": config["evaluate"]["kmer_max_k"]}
    assert on["evaluate"] == {**off["evaluate"], "batch_size": config["evaluate"]["batch_size"]}
    assert on["window"] == {"flank": config["window"]["flank"]} and on["sites"] == config["sites"]
    rescore = json.loads(rule_configs.rescore_sites_config(config))
    assert rescore == {
        "calling": {key: config["calling"][key] for key in ("threshold", "consensus_window")},
        "sites": config["sites"],
        "evaluate": {"batch_size": config["evaluate"]["batch_size"]},
    }
