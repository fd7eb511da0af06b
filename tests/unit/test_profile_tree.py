"""score_profile_tree (evaluation/profile_tree.py): gradient-boosted trees on the base model's score
profiles find what the site score alone cannot, are unavailable without profiles, and read the
profiles around the site with bases beyond the window at 0.0."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from threadpoolctl import threadpool_limits

from workflow_scripts.evaluation import profile_tree
from workflow_scripts.evaluation.baselines import BaselineUnavailable, score_and_type_scores
from workflow_scripts.evaluation.profile_tree import (
    feature_names,
    profile_features,
    profile_window,
    score_profile_tree_scores,
)
from workflow_scripts.metrics import roc_auc

FLANK = 10  # window.flank: windows of 21 nt, the site at 10
SPLITS = ("train", "val", "test")


def profile_windows(rng, n: int, split: str) -> pl.DataFrame:
    """Windows whose site score is the same noise for both classes, while errors carry an acceptor
    peak 3 nt downstream of the site (a competing site, as in real FP): only the profile tells."""
    labels = np.arange(n) % 2
    donor = rng.random((n, 2 * FLANK + 1)) * 0.05
    acceptor = rng.random((n, 2 * FLANK + 1)) * 0.05
    site_score = rng.random(n)
    donor[:, FLANK] = site_score
    acceptor[labels == 1, FLANK + 3] = 0.3 + 0.4 * rng.random(int(labels.sum()))
    return pl.DataFrame(
        {
            "id": [f"{split}{i}" for i in range(n)],
            "split": split,
            "label": labels.astype(np.int8),
            "sequence": "A" * (2 * FLANK + 1),
            "length": 2 * FLANK + 1,
            "site_offset": FLANK,
            "splice_type": "donor",
            "score": site_score,
            "donor_scores": donor.astype(np.float32).tolist(),
            "acceptor_scores": acceptor.astype(np.float32).tolist(),
        }
    ).with_columns(pl.col("donor_scores", "acceptor_scores").cast(pl.List(pl.Float32)))


@pytest.fixture(autouse=True)
def one_openmp_thread():
    """One tree-building thread, as in the evaluate job (OMP_NUM_THREADS from its threads): with
    other jobs on the cores, OpenMP threads that wait for each other make a fit ten times slower."""
    with threadpool_limits(limits=1, user_api="openmp"):
        yield


@pytest.fixture(scope="module")
def splits():
    rng = np.random.default_rng(0)
    return tuple(profile_windows(rng, 200, split) for split in SPLITS)


def test_the_trees_find_a_signal_in_the_profile_that_the_site_score_cannot_see(splits):
    train, val, test = splits
    scores, details = score_profile_tree_scores(train, val, test, 5, 2 * FLANK + 1, seed=3)
    labels = test["label"].to_numpy()
    assert roc_auc(labels, scores) > 0.95
    site_only, _ = score_and_type_scores(train, test)
    assert abs(roc_auc(labels, site_only) - 0.5) < 0.1
    assert details["features"] == 2 * 11 + 1 and details["random_state"] == 3
    assert details["iteration_choice"] == "validation roc_auc" and 1 <= details["iterations"] <= 300
    again, _ = score_profile_tree_scores(train, val, test, 5, 2 * FLANK + 1, seed=3)
    assert np.array_equal(scores, again)


def test_the_signal_outside_profile_flank_is_not_seen(splits):
    train, val, test = splits
    scores, _ = score_profile_tree_scores(train, val, test, 2, 2 * FLANK + 1, seed=0)  # +3 is beyond ±2
    assert abs(roc_auc(test["label"].to_numpy(), scores) - 0.5) < 0.15


def test_unavailable_without_the_profile_columns(splits):
    train, val, test = (frame.drop("acceptor_scores") for frame in splits)
    with pytest.raises(BaselineUnavailable, match=r"no score profiles .*calling.start scores or annotation"):
        score_profile_tree_scores(train, val, test, 5, 2 * FLANK + 1, seed=0)


def test_a_validation_split_of_one_class_fixes_the_iterations(splits):
    train, val, test = splits
    _, details = score_profile_tree_scores(
        train, val.filter(pl.col("label") == 0), test, 5, 2 * FLANK + 1, seed=0
    )
    assert details["iterations"] == profile_tree.FALLBACK_ITER
    assert details["iteration_choice"] == "fixed 100: the validation split has one class"


def test_profile_window_reads_around_the_site_and_zero_beyond_the_window():
    profiles = pl.Series([[0.1, 0.2, 0.3, 0.4, 0.5], [1.0, 2.0, 3.0, 4.0, 5.0], [7.0, 8.0]])
    got = profile_window(profiles, np.array([2, 0, -1]), flank=3)
    np.testing.assert_allclose(got[0], [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0])
    np.testing.assert_allclose(got[1], [0, 0, 0, 1.0, 2.0, 3.0, 4.0])  # no wrap to the list's end
    np.testing.assert_allclose(got[2], np.zeros(7))  # the site is unknown


def test_features_are_donor_then_acceptor_then_the_splice_type(splits):
    features = profile_features(splits[0].head(2), 1, 2 * FLANK + 1)
    assert feature_names(1) == [
        "donor-1",
        "donor+0",
        "donor+1",
        "acceptor-1",
        "acceptor+0",
        "acceptor+1",
        "donor",
    ]
    np.testing.assert_allclose(features[:, 1], splits[0]["score"].head(2).to_numpy(), rtol=1e-6)
    assert features[:, -1].tolist() == [1.0, 1.0]
