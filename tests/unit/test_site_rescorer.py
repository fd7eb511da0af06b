"""sites.transfer: a re-scorer fitted on one genome, saved, loaded and applied unchanged to another
(sites/rescorer.py): it carries what it learnt. Its folder on disk: test_rescorer_files.py."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import polars as pl
import pytest
import torch
from threadpoolctl import threadpool_limits

from tests.site_fixtures import profile_genome, settings
from workflow_scripts.errors import InputError
from workflow_scripts.layout import fold_run_files
from workflow_scripts.sites.candidates import find_candidates
from workflow_scripts.sites.deep_transfer import DeepModels, read_deep_models
from workflow_scripts.sites.folds import assign_folds
from workflow_scripts.sites.items import Items
from workflow_scripts.sites.outputs import TRANSFER_COLUMNS, TRANSFER_ERRORSEQ_COLUMNS, corrected_calls
from workflow_scripts.sites.predictors import (
    ERRORSEQ,
    TRANSFER_BASE_TUNED,
    TRANSFER_ERRORSEQ,
    TRANSFER_TREE,
    TREE,
    predict_out_of_fold,
)
from workflow_scripts.sites.report import site_report
from workflow_scripts.sites.rescorer import fit_rescorer, with_transfer


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


def truth_probability(found, right: float) -> np.ndarray:
    """A probability that is `right` on true sites and 1 - `right` on false candidates."""
    truth = found.table["is_true_site"].to_numpy()
    return np.where(truth, right, 1 - right)


def with_deep_models(seed: int):
    """A source whose sites.model (stand-in probabilities: the fold models' own run is in
    test_site_calls_workflow.py) separates its candidates; its rescorer carries two models."""
    found, items, predictions = fitted(seed)
    predictions = replace(predictions, errorseq_probability=truth_probability(found, 0.8))
    states = ({"w": torch.ones(2)}, {"w": torch.zeros(2)})
    deep = DeepModels(states=states, configs=({"window": {"flank": 50}},) * 2)
    return fit_rescorer(found, items, predictions, settings(), {"source": "chr1", "source_sites": 1}, deep)


def test_the_deep_models_transfer_at_the_thresholds_of_their_source_probabilities():
    rescorer = with_deep_models(seed=0)
    assert (
        rescorer.thresholds[ERRORSEQ].keys() == rescorer.thresholds[TREE].keys() and rescorer.deep.flank == 50
    )
    found, items, predictions = fitted(seed=1)
    deep = truth_probability(found, 0.7)  # right on this genome, less sure than at the source
    moved = with_transfer(predictions, found, rescorer, deep)
    donors = found.table["splice_type"].to_numpy() == "donor"
    expected = deep[donors] >= rescorer.thresholds[ERRORSEQ]["donor"]
    assert np.array_equal(moved.calls[TRANSFER_ERRORSEQ][donors], expected)
    report = site_report(found, items, moved, settings(), 0, {"file": "source.pkl", **rescorer.source})
    assert f1(report, TRANSFER_ERRORSEQ) == 1.0, report["calls"][TRANSFER_ERRORSEQ]
    gain = report["differences"]["transfer_errorseq - transfer_base_tuned"]["overall"]["f1"]
    assert gain["verdict"] == "better", gain
    assert "transfer_errorseq - transfer_tree" in report["differences"]
    assert "the mean of its deep models reaches F1 1.000, " in report["answer"]
    table = corrected_calls(found, moved)
    assert table.columns[-len(TRANSFER_ERRORSEQ_COLUMNS) :] == list(TRANSFER_ERRORSEQ_COLUMNS)


def test_deep_models_above_the_source_thresholds_call_everything_they_score_high():
    """Thresholds are the source's: where the deep models score everything above them, every
    candidate is called (nothing is re-tuned on the target)."""
    rescorer = with_deep_models(seed=0)
    found, _, predictions = fitted(seed=1)
    moved = with_transfer(predictions, found, rescorer, np.full(found.table.height, 0.99))
    assert moved.calls[TRANSFER_ERRORSEQ].all()


def test_fold_models_of_different_windows_are_refused(tmp_path):
    for fold, flank in ((1, 50), (2, 40)):
        model = tmp_path / f"fold{fold}/model"
        model.mkdir(parents=True)
        torch.save({"w": torch.ones(2)}, model / "model.pt")
        window = {"flank": flank, "length": 2 * flank + 1, "site_offset": flank}
        (model / "model.json").write_text(json.dumps({"window": window}))
    with pytest.raises(InputError, match="window.flank"):
        read_deep_models([fold_run_files(str(tmp_path / "fold1")), fold_run_files(str(tmp_path / "fold2"))])
