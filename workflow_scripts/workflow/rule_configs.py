"""The `--config` JSON of the rules that read only some keys of a section: each rule gets the keys
it reads and no others, so a change to another key (say calling.threshold for annotate_sites)
does not rerun it. `config` is the workflow's validated config (defaults filled); the values are
the `config` params of rules/calling.smk, sites.smk and rescore.smk.
"""

from __future__ import annotations

import json

from workflow_scripts.calling.contract import (
    ANNOTATE_SITES_KEYS,
    CLUSTER_GENES_KEYS,
    MAKE_CALLS_KEYS,
    SCORE_BASE_MODEL_KEYS,
    SITE_CALLS_KEYS,
)

# the calling rules' keys of `calling:` (calling/contract.py)
CALLING_KEYS = {
    "annotate_sites": ANNOTATE_SITES_KEYS,
    "cluster_genes": CLUSTER_GENES_KEYS,
    "make_calls": MAKE_CALLS_KEYS,
    "score_base_model": SCORE_BASE_MODEL_KEYS,
}
# what the candidates and their folds depend on: a change of another sites key (the tree, the
# bootstrap) does not retrain sites.model's runs
SITE_WINDOWS_SITES_KEYS = ("floor", "peak_radius", "folds", "seed")


def as_json(sections: dict) -> str:
    return json.dumps(sections, sort_keys=True)


def calling_config(config: dict, rule: str) -> str:
    """--config for one calling rule: only its keys of calling: (those set)."""
    calling = {key: config["calling"][key] for key in CALLING_KEYS[rule] if key in config["calling"]}
    return as_json({"calling": calling})


def site_calling(config: dict) -> dict:
    """The keys of calling: site_calls, site_windows and rescore_sites read."""
    return {key: config["calling"][key] for key in SITE_CALLS_KEYS}


def site_calls_config(config: dict, site_model: bool) -> str:
    """--config for site_calls: its calling keys, the sites section, the k-mer baseline's
    window.flank and evaluate.kmer_max_k (with sites.model, `site_model`, evaluate's batch_size:
    errorseq's val predictions)."""
    evaluate = {"kmer_max_k": config["evaluate"]["kmer_max_k"]}
    if site_model:
        evaluate["batch_size"] = config["evaluate"]["batch_size"]
    window = {"flank": config["window"]["flank"]}
    return as_json(
        {"calling": site_calling(config), "sites": config["sites"], "window": window, "evaluate": evaluate}
    )


def site_windows_config(config: dict) -> str:
    """--config for site_windows: site_calls' calling keys, the sites keys of the candidates and
    folds, the window section and split.fractions (train : val)."""
    sites = {key: config["sites"][key] for key in SITE_WINDOWS_SITES_KEYS}
    split = {"fractions": config["split"]["fractions"]}
    return as_json(
        {"calling": site_calling(config), "sites": sites, "window": config["window"], "split": split}
    )


def rescore_sites_config(config: dict) -> str:
    """--config for rescore_sites: site_calls' calling keys, the sites section (the re-scorer's
    feature settings must match it) and evaluate's batch_size."""
    evaluate = {"batch_size": config["evaluate"]["batch_size"]}
    return as_json({"calling": site_calling(config), "sites": config["sites"], "evaluate": evaluate})
