"""site_windows reads only the sites keys it declares (config/stages/site_windows.py); the others
reach SiteSettings as the schema's defaults. Its windows and folds come from the candidates' table
(sites/inputs.py: folded_candidates, then profiled_windows and fold_windows read `found.table`,
cut by window.flank), so none of the undeclared keys may change that table: sites.flank shapes only
`found.features`, the tree's profile features, which site_windows never reads."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from polars.testing import assert_frame_equal

from tests.site_fixtures import profile_genome, settings
from workflow_scripts.config.stages import STAGES
from workflow_scripts.config.types import SitesSection
from workflow_scripts.sites.candidates import find_candidates
from workflow_scripts.sites.folds import assign_folds

OTHER_VALUES = {  # a value unlike site_fixtures.settings' for each key site_windows does not declare
    "flank": 60,
    "bootstrap_replicates": 7,
    "tree": {
        "max_iter": 3,
        "learning_rate": 0.5,
        "max_leaf_nodes": 3,
        "min_samples_leaf": 1,
        "l2_regularization": 1.0,
    },
    "transfer": "elsewhere/results/sites/rescorer",
    "model": True,
}


def undeclared_sites_keys() -> set[str]:
    declared = set(STAGES["site_windows"].config["sites"])
    return {field.name for field in dataclasses.fields(SitesSection)} - declared


def test_the_keys_checked_here_are_the_undeclared_ones():
    assert undeclared_sites_keys() == set(OTHER_VALUES)


@pytest.mark.parametrize("key", sorted(OTHER_VALUES))
def test_an_undeclared_sites_key_changes_no_candidate_or_fold(key):
    scores, sites, genes, clusters = profile_genome(n_genes=12)

    def folded(site_settings):
        found = find_candidates([("chr1", scores)], sites, genes, site_settings)
        return assign_folds(found, clusters, site_settings.folds, site_settings.seed)

    default, changed = folded(settings()), folded(settings(**{key: OTHER_VALUES[key]}))
    assert default.table.height > 0
    assert_frame_equal(changed.table, default.table)
    assert_frame_equal(changed.sites, default.sites)
    assert np.array_equal(changed.members, default.members)
    if key == "flank":  # it reaches the tree's features only
        assert changed.features.shape[1] != default.features.shape[1]
