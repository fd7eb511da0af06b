"""Orthologs across two genomes (benchmarks/site_transfer/orthologs.py) and the source predictors refitted without
them (benchmarks/site_transfer/held_out.py, benchmarks/site_transfer/held_out_deep.py): a planted copy of a source gene is found and
nothing else is; the held-out trees never saw its fold; leaving out no fold is the re-scorer as
shipped and leaving out one fold is site_calls' own out-of-fold predictor of that fold."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from threadpoolctl import threadpool_limits

from benchmarks.site_transfer.held_out import (
    NOTHING,
    SourceFits,
    equal_size_control,
    excluded_folds,
    scheme_calls,
    source_gene_folds,
)
from benchmarks.site_transfer.held_out_deep import MEAN, deep_scheme, held_out_model
from benchmarks.site_transfer.ortholog_transfer import item_genes
from benchmarks.site_transfer.orthologs import exonic_kmer_pairs, orthologs, share_counts
from tests.ortholog_fixtures import plant_copy, species
from tests.site_fixtures import profile_genome, settings
from workflow_scripts.sites.candidates import find_candidates
from workflow_scripts.sites.folds import assign_folds
from workflow_scripts.sites.items import Items
from workflow_scripts.sites.predictors import (
    BASE_TUNED,
    TRANSFER_BASE_TUNED,
    TRANSFER_TREE,
    TREE,
    new_tree,
    predict_out_of_fold,
)
from workflow_scripts.sites.rescorer import fit_rescorer, with_transfer


@pytest.fixture(autouse=True, scope="module")
def one_openmp_thread():
    with threadpool_limits(limits=1, user_api="openmp"):
        yield


def pairs_of(target, source):
    return exonic_kmer_pairs(target.exons, target.genome, source.exons, source.genome)


def test_a_planted_copy_on_the_other_strand_is_the_only_ortholog_found():
    source, target = species("s", 20, seed=0), species("t", 12, seed=1)
    plant_copy(target, "t004", source, "s007", rate=0.03, seed=2)  # t004 on +, s007 on -
    found = orthologs(pairs_of(target, source))
    assert found.select("target_gene", "source_gene").rows() == [("t004", "s007")]
    assert 0.5 < found["share"][0] < 1, "3% of bases redrawn (2.25% changed) keep ~0.98^16 of the 16-mers"
    unplanted = species("t", 12, seed=1)
    assert orthologs(pairs_of(unplanted, source)).height == 0


def test_the_share_bar_decides_and_too_few_shared_kmers_never_pair():
    """t001 carries 80 nt of s003's exons (65 16-mers of its 385: share 0.17), t002 carries 30 nt
    (15 16-mers: below the 20 a pair needs)."""
    source, target = species("s", 6, seed=3), species("t", 4, seed=4)
    s003 = source.exons.filter(pl.col("gene_id") == "s003").sort("start")
    piece = source.genome.sequence[s003["start"][0] - 1 : s003["start"][0] - 1 + 80]
    for gene, length in (("t001", 80), ("t002", 30)):
        start = target.exons.filter(pl.col("gene_id") == gene).sort("start")["start"][0]
        target.genome.sequence[start - 1 : start - 1 + length] = piece[:length]
    pairs = pairs_of(target, source)
    assert pairs.select("target_gene", "source_gene", "shared").rows() == [("t001", "s003", 65)]
    assert orthologs(pairs, 0.1).height == 1 and orthologs(pairs, 0.2).height == 0
    assert share_counts(pairs, (0.1, 0.2)) == {0.1: 1, 0.2: 0}


def folded_source():
    scores, sites, genes, clusters = profile_genome(seed=0)
    found = assign_folds(find_candidates([("chr1", scores)], sites, genes, settings()), clusters, 5, seed=0)
    return found, Items.from_candidates(found), genes, clusters


def test_a_held_out_tree_is_fitted_without_the_fold_of_the_orthologs_cluster():
    found, items, genes, clusters = folded_source()
    gene_fold = source_gene_folds(found, clusters, genes)
    planted = pl.DataFrame({"target_gene": ["t1", "t1", "t2"], "source_gene": ["g007", "g006", "g011"]})
    excluded = excluded_folds(planted, gene_fold)
    ortholog_fold = gene_fold["g007"]
    assert gene_fold["g006"] == ortholog_fold, "g006 and g007 form one gene cluster"
    assert excluded == {"t1": frozenset({ortholog_fold}), "t2": frozenset({gene_fold["g011"]})}
    fits = SourceFits(found, items, settings())
    fit = fits.fit(excluded["t1"])
    cluster = clusters.filter(pl.col("gene_id") == "g007")["gene_cluster"][0]
    trained = found.table.filter(pl.Series(fit.training))
    assert cluster not in trained["gene_cluster"].to_list() and "g007" not in trained["gene_id"].to_list()
    assert set(trained["fold"].to_list()) == set(fits.folds) - {ortholog_fold}
    refitted = new_tree(settings().tree, settings().seed).fit(
        found.features[fit.training], found.table["is_true_site"].to_numpy()[fit.training]
    )
    assert np.array_equal(fit.probability(found.features), refitted.predict_proba(found.features)[:, 1])


def test_leaving_out_one_fold_is_site_calls_own_out_of_fold_predictor_of_that_fold():
    found, items, _, _ = folded_source()
    predictions = predict_out_of_fold(found, items, settings())
    fits = SourceFits(found, items, settings())
    fold = found.table["fold"].to_numpy()
    for f in fits.folds:
        fit = fits.fit(frozenset({f}))
        assert np.array_equal(
            fit.probability(found.features[fold == f]), predictions.tree_probability[fold == f]
        )
        assert fit.thresholds == {
            BASE_TUNED: predictions.thresholds[BASE_TUNED][f],
            TREE: predictions.thresholds[TREE][f],
        }


def test_leaving_out_no_fold_is_the_rescorer_as_shipped():
    found, items, _, _ = folded_source()
    predictions = predict_out_of_fold(found, items, settings())
    fits = SourceFits(found, items, settings())
    shipped = fit_rescorer(found, items, predictions, settings(), {"source": "chr1"})
    assert fits.fit(NOTHING).thresholds == {key: shipped.thresholds[key] for key in (BASE_TUNED, TREE)}
    scores, sites, genes, clusters = profile_genome(seed=1)
    target = assign_folds(find_candidates([("chr1", scores)], sites, genes, settings()), clusters, 5, seed=0)
    moved = with_transfer(
        predict_out_of_fold(target, Items.from_candidates(target), settings()), target, shipped
    )
    scheme = scheme_calls(fits, target, [None] * target.table.height)
    assert np.array_equal(scheme.probability, moved.transfer_probability)
    assert np.array_equal(scheme.tree_calls, moved.calls[TRANSFER_TREE])
    assert np.array_equal(scheme.base_calls, moved.calls[TRANSFER_BASE_TUNED])


def test_each_target_candidate_is_scored_by_the_fit_without_its_folds():
    found, items, _, _ = folded_source()
    fits = SourceFits(found, items, settings())
    chosen = [frozenset({2}) if row % 3 == 0 else None for row in range(found.table.height)]
    scheme = scheme_calls(fits, found, chosen)
    rows = np.array([c is not None for c in chosen])
    assert np.array_equal(
        scheme.probability[rows], fits.fit(frozenset({2})).probability(found.features[rows])
    )
    assert np.array_equal(scheme.probability[~rows], fits.fit(NOTHING).probability(found.features[~rows]))
    for too_many in (
        frozenset(fits.folds),
        frozenset(fits.folds[1:]),
    ):  # the nested thresholds need two folds
        with pytest.raises(ValueError, match="fewer than 2 source folds are left"):
            fits.fit(too_many)


def test_the_equal_size_control_leaves_out_as_many_other_folds():
    folds = [1, 2, 3, 4, 5]
    assert equal_size_control(frozenset({2}), folds) == {3}
    assert equal_size_control(frozenset({5}), folds) == {1}
    assert equal_size_control(frozenset({1, 2}), folds) == {3, 4}
    assert equal_size_control(frozenset({1, 3, 5}), folds) is None
    assert equal_size_control(NOTHING, folds) == NOTHING


def test_fold_model_f_scores_the_genes_whose_orthologs_lie_in_fold_f_at_its_own_thresholds():
    assert held_out_model(NOTHING) is MEAN and held_out_model(frozenset({3})) == 3
    with pytest.raises(ValueError, match="no fold model left out folds"):
        held_out_model(frozenset({1, 2}))
    probability = {1: np.array([0.2, 0.9, 0.6]), 2: np.array([0.4, 0.1, 0.2])}
    thresholds = {1: {"donor": 0.5, "acceptor": 0.5}, 2: {"donor": 0.15, "acceptor": 0.5}}
    shipped = {"donor": 0.35, "acceptor": 0.5}
    types = np.array(["donor", "donor", "donor"])
    scored, called = deep_scheme(probability, thresholds, shipped, types, [MEAN, 2, 1])
    assert np.allclose(scored, [0.3, 0.1, 0.6]) and called.tolist() == [False, False, True]


def test_item_genes_follow_the_items_order():
    found, items, _, _ = folded_source()
    genes = item_genes(found)
    assert len(genes) == len(items)
    false_items = np.flatnonzero(~items.is_site)
    assert (
        genes[false_items].tolist()
        == found.table["gene_id"].to_numpy()[items.members[false_items, 0]].tolist()
    )
    assert genes[items.is_site].tolist() == found.sites["gene_id"].to_list()
