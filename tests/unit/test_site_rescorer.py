"""sites.transfer: a re-scorer fitted on one genome, saved, loaded and applied unchanged to another
(sites/rescorer.py): it carries what it learnt, and it is refused where its features would differ."""

from __future__ import annotations

import pickle

import numpy as np
import polars as pl
import pytest
from threadpoolctl import threadpool_limits

from tests.site_fixtures import profile_genome, settings
from workflow_scripts.errors import InputError
from workflow_scripts.sites.candidates import find_candidates
from workflow_scripts.sites.folds import assign_folds
from workflow_scripts.sites.items import Items
from workflow_scripts.sites.outputs import TRANSFER_COLUMNS, corrected_calls
from workflow_scripts.sites.predictors import TRANSFER_BASE_TUNED, TRANSFER_TREE, TREE, predict_out_of_fold
from workflow_scripts.sites.report import site_report
from workflow_scripts.sites.rescorer import fit_rescorer, load_rescorer, save_rescorer, with_transfer


@pytest.fixture(autouse=True, scope="module")
def one_openmp_thread():
    with threadpool_limits(limits=1, user_api="openmp"):
        yield


def folded(seed: int, mirrored: bool = False):
    scores, sites, genes, clusters = profile_genome(seed=seed, mirrored=mirrored)
    found = find_candidates([("chr1", scores)], sites, genes, settings())
    return assign_folds(found, clusters, 5, seed=0)


def fitted(seed: int, mirrored: bool = False):
    found = folded(seed, mirrored)
    items = Items.from_candidates(found)
    predictions = predict_out_of_fold(found, items, settings())
    return found, items, predictions


@pytest.fixture(scope="module")
def source():
    found, items, predictions = fitted(seed=0)
    return fit_rescorer(found, items, predictions, settings(), {"source": "chr1", "source_sites": 1})


def transfer_report(rescorer, seed: int, mirrored: bool = False) -> dict:
    found, items, predictions = fitted(seed, mirrored)
    moved = with_transfer(predictions, found, rescorer)
    facts = {"file": "source.pkl", **rescorer.source}
    return site_report(found, items, moved, settings(), 0, facts)


def f1(report: dict, name: str) -> float:
    return report["calls"][name]["overall"]["f1"]


def test_a_tree_fitted_on_one_genome_calls_another_genome_of_the_same_rule(source):
    report = transfer_report(source, seed=1)
    assert f1(report, TRANSFER_TREE) > 0.9 and f1(report, TRANSFER_BASE_TUNED) < 0.75, report["calls"]
    gain = report["differences"]["transfer_tree - transfer_base_tuned"]["overall"]["f1"]
    assert gain["verdict"] == "better" and gain["low"] > 0.1, gain
    assert {"transfer_base_tuned - base_threshold", "tree - transfer_tree"} <= set(report["differences"])
    assert report["scores"]["transfer_probability"]["donor"]["pr_auc"] > 0.9
    assert "transferred unchanged from chr1" in report["answer"]


def test_the_transferred_tree_is_the_source_genomes_not_refitted_here(source):
    """Where the target's truth is the mirror of the source's, the transferred tree is wrong in
    the source's way while the target's own out-of-fold tree learns the target."""
    report = transfer_report(source, seed=1, mirrored=True)
    assert f1(report, TREE) > 0.9 and f1(report, TRANSFER_TREE) < 0.2, report["calls"]
    assert report["differences"]["tree - transfer_tree"]["overall"]["f1"]["verdict"] == "better"


def test_corrected_calls_carry_the_transferred_columns_with_the_source_thresholds(source):
    found, items, predictions = fitted(seed=1)
    table = corrected_calls(found, with_transfer(predictions, found, source))
    assert set(TRANSFER_COLUMNS) <= set(table.columns)
    candidates = table.filter(pl.col("is_candidate"))
    donors = candidates.filter(pl.col("splice_type") == "donor")
    assert donors["transfer_tree_threshold"].unique().to_list() == [source.thresholds[TREE]["donor"]]
    expected = donors["transfer_probability"].to_numpy() >= np.float32(source.thresholds[TREE]["donor"])
    assert np.array_equal(donors["call_transfer_tree"].to_numpy(), expected)


def test_a_saved_rescorer_loads_to_the_same_probabilities(source, tmp_path):
    path = tmp_path / "rescorer.pkl"
    save_rescorer(source, str(path))
    loaded = load_rescorer(str(path), settings())
    features = folded(seed=2).features
    assert np.array_equal(loaded.probability(features), source.probability(features))
    assert loaded.thresholds == source.thresholds


def test_a_rescorer_whose_features_would_differ_is_refused_naming_the_setting(source, tmp_path):
    path = tmp_path / "rescorer.pkl"
    save_rescorer(source, str(path))
    with pytest.raises(InputError, match="flank") as refused:
        load_rescorer(str(path), settings(flank=10))
    assert str(path) in str(refused.value)


@pytest.mark.parametrize(
    "payload, field",
    [
        (b"not a pickle", "rescorer"),
        (pickle.dumps({"format": "something else"}), "format"),
        (pickle.dumps({"format": "errorseq-site-rescorer/1", "sklearn": "0.1"}), "sklearn"),
    ],
)
def test_a_file_that_is_not_a_current_rescorer_is_refused(tmp_path, payload, field):
    path = tmp_path / "rescorer.pkl"
    path.write_bytes(payload)
    with pytest.raises(InputError, match=field):
        load_rescorer(str(path), settings())
