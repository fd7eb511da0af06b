"""The decision threshold: a config number as it is, or `auto` = the F1-best cut on validation."""

import numpy as np
import pytest

from workflow_scripts.artifacts import THRESHOLD_CHOICE_FIELDS
from workflow_scripts.evaluation.threshold import FALLBACK_THRESHOLD, best_f1_threshold, choose_threshold
from workflow_scripts.metrics import binary_metrics


def test_best_f1_threshold_known_answer():
    labels = [1, 1, 0, 1, 0, 0]
    probs = [0.9, 0.8, 0.7, 0.6, 0.3, 0.1]
    # F1 when cutting at 0.9, 0.8, 0.7, 0.6, 0.3, 0.1: 2/4, 4/5, 4/6, 6/7, 6/8, 6/9 -> best at 0.6,
    # placed halfway to the next lower score 0.3
    threshold, f1 = best_f1_threshold(labels, probs)
    assert threshold == pytest.approx(0.45) and f1 == pytest.approx(6 / 7)


def test_ties_take_the_highest_cut_and_the_lowest_score_is_used_as_it_is():
    # cutting at 0.8 or 0.2 gives F1 2/3 both; the higher cut wins
    threshold, f1 = best_f1_threshold([1, 0, 0, 1], [0.8, 0.5, 0.5, 0.2])
    assert f1 == pytest.approx(2 / 3) and threshold == pytest.approx(0.65)
    # every window an error is best when the errors score lowest: the cut is the lowest score
    threshold, _ = best_f1_threshold([0, 1, 1, 1], [0.9, 0.3, 0.2, 0.1])
    assert threshold == pytest.approx(0.1)


def test_no_cut_beats_the_chosen_one_on_random_scores():
    rng = np.random.default_rng(0)
    for _ in range(20):
        labels = rng.integers(0, 2, 60)
        labels[:2] = (0, 1)
        probs = np.round(rng.random(60) * 0.5 + 0.4 * labels, 2)  # ties on purpose
        threshold, f1 = best_f1_threshold(labels, probs)
        assert binary_metrics(labels, probs, threshold)["f1"] == pytest.approx(f1)
        assert max(
            binary_metrics(labels, probs, cut)["f1"] or 0 for cut in np.unique(probs)
        ) == pytest.approx(f1)


def test_a_number_is_used_as_it_is():
    choice = choose_threshold(0.3, [0, 1], [0.9, 0.1])
    assert tuple(choice) == THRESHOLD_CHOICE_FIELDS
    assert choice["mode"] == "fixed" and choice["threshold"] == 0.3 and choice["criterion"] is None


def test_auto_records_how_it_chose():
    choice = choose_threshold("auto", [1, 1, 0, 1, 0, 0], [0.9, 0.8, 0.7, 0.6, 0.3, 0.1])
    assert choice == {
        "mode": "auto",
        "threshold": pytest.approx(0.45),
        "criterion": "f1",
        "split": "val",
        "n": 6,
        "n_positive": 3,
        "criterion_value": pytest.approx(6 / 7),
        "reason": None,
        "flagged_share": pytest.approx(4 / 6),
        "warning": (
            "this cut flags 67% of the validation windows (3 of 6 are errors): the model separates the classes "
            "weakly; for calls a user can act on, set evaluate.threshold to precision:0.9 (or a number)"
        ),
    }


@pytest.mark.parametrize(
    "labels, probs, why", [([], [], "no windows"), ([0, 0], [0.2, 0.9], "one class only")]
)
def test_auto_falls_back_when_validation_cannot_choose(labels, probs, why):
    choice = choose_threshold("auto", labels, probs)
    assert choice["threshold"] == FALLBACK_THRESHOLD and why in choice["reason"]
    assert choice["criterion_value"] is None and choice["n"] == len(labels)


def test_a_precision_target_takes_the_lowest_cut_that_reaches_it():
    """Precision at the cuts 0.9 .. 0.1: 1, 1, 2/3, 3/4, 3/5, 1/2: 0.75 is first reached lowest at 0.6."""
    labels, probs = [1, 1, 0, 1, 0, 0], [0.9, 0.8, 0.7, 0.6, 0.3, 0.1]
    choice = choose_threshold("precision:0.75", labels, probs)
    assert choice["mode"] == "precision:0.75" and choice["threshold"] == pytest.approx(0.45)
    assert choice["criterion"] == "precision" and choice["criterion_value"] == pytest.approx(0.75)
    strict = choose_threshold("precision:0.9", labels, probs)
    assert strict["threshold"] == pytest.approx(0.75) and strict["flagged_share"] == pytest.approx(2 / 6)
    assert strict["warning"] is None and strict["reason"] is None


def test_a_weak_model_gets_a_precision_cut_that_flags_few():
    """The F1-best cut of a weak model flags most windows (fn_vs_tn: 0.12 flagged most calls)."""
    rng = np.random.default_rng(3)
    labels = (rng.random(2000) < 0.3).astype(int)
    probs = np.clip(0.3 + 0.05 * labels + rng.normal(0, 0.1, 2000), 0, 1)
    best_f1 = choose_threshold("auto", labels, probs)
    assert best_f1["flagged_share"] > 0.5 and "precision:0.9" in best_f1["warning"]
    precise = choose_threshold("precision:0.6", labels, probs)
    assert precise["flagged_share"] < 0.05 and precise["warning"] is None


def test_an_unreachable_precision_says_so():
    choice = choose_threshold("precision:0.99", [0, 1, 0, 1], [0.9, 0.8, 0.7, 0.6])
    assert choice["threshold"] == pytest.approx(0.85) and "no cut reaches precision 0.99" in choice["reason"]
