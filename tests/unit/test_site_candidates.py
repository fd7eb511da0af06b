"""site_calls' candidates: local maxima above the floor, matched to annotated sites within ±w,
missed sites, profiles in the transcript's direction, and folds that keep gene clusters whole."""

from __future__ import annotations

import dataclasses

import numpy as np
import polars as pl
import pytest

from tests.site_fixtures import gene_rows, gene_table, scores_of, set_scores, settings, site_table
from workflow_scripts.config.types import complete_typed_section
from workflow_scripts.errors import InputError
from workflow_scripts.sites.candidates import chromosome_candidates, feature_names, profile_features
from workflow_scripts.sites.folds import assign_folds, cluster_folds, with_clusters
from workflow_scripts.sites.settings import SiteSettings

DONORS = {5: 0.9, 6: 0.8, 8: 0.85, 12: 0.004, 15: 0.3, 16: 0.3, 30: 0.2}


def one_gene(extra_minus: dict[int, float] | None = None):
    plus = set_scores(gene_rows("g1", 1, 40, "+"), "donor", DONORS)
    minus = set_scores(gene_rows("g2", 1, 40, "-"), "donor", extra_minus or {})
    genes = gene_table([("g1", 1, 40, "+"), ("g2", 1, 40, "-")])
    return scores_of(pl.concat([plus, minus])), genes


def donor_positions(found, strand: str = "+") -> list[int]:
    table = found.table.filter((pl.col("splice_type") == "donor") & (pl.col("strand") == strand))
    return table["position"].to_list()


def test_candidates_are_local_maxima_at_or_above_the_floor():
    scores, genes = one_gene(extra_minus={6: 0.95})  # the other strand's peak suppresses nothing
    found = chromosome_candidates(scores, site_table([]), genes, settings())
    # 6 lies beside 5 (higher), 12 is below the floor, 16 ties 15 on a plateau (the lower wins);
    # 8 is 3 nt from 5, so it is a maximum of its own ±2 nt
    assert donor_positions(found) == [5, 8, 15, 30]
    assert donor_positions(found, "-") == [6]
    assert found.table.filter(pl.col("splice_type") == "acceptor").height == 0  # background < floor
    lower_floor = chromosome_candidates(scores, site_table([]), genes, settings(floor=0.001))
    assert 12 in donor_positions(lower_floor)


def test_a_candidate_within_the_window_of_a_site_of_its_type_is_true_and_sites_without_one_are_missed():
    scores, genes = one_gene()
    sites = site_table(
        [
            ("g1", 7, "+", "donor"),  # candidates 5 and 8 lie within ±2
            ("g1", 11, "+", "donor"),  # 8 is 3 nt away: missed
            ("g1", 30, "+", "acceptor"),  # a donor peak does not match an acceptor site
            ("g1", 32, "+", "donor"),  # 30 within ±2
        ]
    )
    found = chromosome_candidates(scores, sites, genes, settings())
    table = found.table.filter(pl.col("strand") == "+")
    truth = dict(zip(table["position"].to_list(), table["is_true_site"].to_list()))
    assert truth == {5: True, 8: True, 15: False, 30: True}
    missed = found.sites.filter(pl.Series(found.missed))
    assert sorted(zip(missed["position"], missed["splice_type"])) == [(11, "donor"), (30, "acceptor")]
    site_7 = found.sites["position"].to_list().index(7)
    members = found.table[found.members[site_7][found.members[site_7] >= 0]]["position"].to_list()
    assert members == [5, 8]
    narrower = chromosome_candidates(scores, sites, genes, settings(consensus_window=1))
    assert narrower.table.filter(pl.col("position") == 5)["is_true_site"].to_list() == [False]


def test_true_candidates_take_their_sites_gene_and_others_the_gene_that_holds_them():
    scores, genes = one_gene()
    found = chromosome_candidates(scores, site_table([("gX", 7, "+", "donor")]), genes, settings())
    genes_of = dict(zip(found.table["position"], found.table["gene_id"]))
    assert genes_of[5] == "gX" and genes_of[15] == "g1"


def test_profiles_run_in_the_transcripts_direction():
    frame = pl.concat(
        [
            set_scores(gene_rows("p", 1, 100, "+"), "acceptor", {60: 0.7}),
            set_scores(gene_rows("m", 1, 100, "-"), "acceptor", {40: 0.7}),
        ]
    )
    scores = scores_of(frame)
    names = feature_names(25)
    for strand, key in (("+", scores.keys[49]), ("-", scores.keys[100 + 49])):
        features = profile_features(scores, np.array([key]), "donor", 25)[0]
        assert scores.groups[key >> 40][1] == strand
        assert features[names.index("acceptor_+10")] == pytest.approx(0.7), strand  # position 50 ± 10
        assert features[names.index("is_donor")] == 1.0
    edge = profile_features(scores, np.array([scores.keys[0]]), "acceptor", 25)[0]
    assert np.isnan(edge[names.index("donor_-1")])  # before the first scored position
    assert edge[names.index("is_donor")] == 0.0


def test_folds_keep_each_gene_cluster_whole_and_test_every_gene_once():
    genes, sites, frames = [], [], []
    for index in range(12):
        start = 100 * index + 1
        frames.append(set_scores(gene_rows(f"g{index}", start, start + 60, "+"), "donor", {start + 30: 0.9}))
        genes.append((f"g{index}", start, start + 60, "+"))
        sites.append((f"g{index}", start + 30, "+", "donor"))
    clusters = pl.DataFrame(
        {"gene_id": [g[0] for g in genes], "gene_cluster": [f"c{i // 3}" for i in range(12)]}
    )
    found = chromosome_candidates(
        scores_of(pl.concat(frames)), site_table(sites), gene_table(genes), settings()
    )
    folded = assign_folds(found, clusters, 3, seed=1)
    rows = pl.concat(
        [folded.table.select("gene_cluster", "fold"), folded.sites.select("gene_cluster", "fold")]
    )
    assert rows.group_by("gene_cluster").agg(pl.col("fold").n_unique())["fold"].max() == 1
    assert sorted(rows["fold"].unique().to_list()) == [1, 2, 3]
    again = assign_folds(found, clusters, 3, seed=1)
    assert again.table["fold"].to_list() == folded.table["fold"].to_list()
    with pytest.raises(InputError, match="5 folds need at least 5 gene clusters; the scored genes form 4"):
        assign_folds(found, clusters, 5, seed=1)


def test_a_gene_the_clusters_table_lacks_is_a_cluster_of_its_own():
    clusters = pl.DataFrame({"gene_id": ["a", "b"], "gene_cluster": ["ab", "ab"]})
    frame = pl.DataFrame({"gene_id": ["a", "b", "z"]})
    assert with_clusters(frame, clusters)["gene_cluster"].to_list() == ["ab", "ab", "z"]
    folds = cluster_folds(pl.Series(["ab", "ab", "z", "y"]), 3, seed=0)
    assert sorted(folds["fold"].to_list()) == [1, 2, 3]


def test_a_floor_above_the_base_models_threshold_is_refused():
    sites = complete_typed_section("sites", {"floor": 0.6})
    with pytest.raises(InputError, match=r"sites.floor: 0.6 is above calling.threshold \(0.5\)"):
        SiteSettings.from_config(complete_typed_section("calling", {}), sites)


def test_the_settings_are_the_typed_sites_section_and_read_back_from_site_metrics():
    """site_metrics.json's `settings`: calling's two keys, then sites' (not transfer), in the
    order it has always had; run_folder reads them back as the same settings."""
    sites = complete_typed_section("sites", {"floor": 0.01, "model": True, "transfer": "elsewhere"})
    found = SiteSettings.from_config(complete_typed_section("calling", {}), sites)
    assert isinstance(found, type(sites)) and found.floor == 0.01 and found.threshold == 0.5
    summary = found.summary()
    assert list(summary) == [
        "threshold",
        "consensus_window",
        "floor",
        "peak_radius",
        "folds",
        "flank",
        "bootstrap_replicates",
        "seed",
        "tree",
        "model",
    ]
    assert summary["tree"] == sites.tree.to_dict()
    assert SiteSettings.from_summary(summary) == dataclasses.replace(found, transfer=None)
