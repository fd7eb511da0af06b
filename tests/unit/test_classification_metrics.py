import json

import numpy as np
import pytest

from workflow_scripts.artifacts import METRIC_FIELDS, NULLABLE_METRICS
from workflow_scripts.metrics import (
    average_precision,
    binary_metrics,
    grouped_metrics,
    precision_recall_curve,
    roc_auc,
    roc_curve,
)

METRIC_KEYS = set(METRIC_FIELDS)


def pairwise_auc(labels, probs):
    """Brute force: share of (positive, negative) pairs ranked correctly, ties count half."""
    positives = probs[labels == 1]
    negatives = probs[labels == 0]
    wins = (positives[:, None] > negatives[None, :]).sum()
    ties = (positives[:, None] == negatives[None, :]).sum()
    return (wins + 0.5 * ties) / (positives.size * negatives.size)


def test_hand_computed_example():
    # Sorted by score: 0.8(+) 0.4(-) 0.35(+) 0.1(-).
    metrics = binary_metrics([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8], threshold=0.5)
    assert set(metrics) == METRIC_KEYS
    assert metrics["confusion"] == {"tp": 1, "fp": 0, "tn": 2, "fn": 1}
    assert (metrics["n"], metrics["n_positive"], metrics["n_negative"]) == (4, 2, 2)
    assert metrics["accuracy"] == pytest.approx(0.75)
    assert metrics["precision"] == pytest.approx(1.0)
    assert metrics["recall"] == pytest.approx(0.5)
    assert metrics["f1"] == pytest.approx(2 / 3)
    # MCC = (1*2 - 0*1) / sqrt(1 * 2 * 2 * 3)
    assert metrics["mcc"] == pytest.approx(2 / np.sqrt(12))
    # 3 of 4 positive/negative pairs ranked correctly.
    assert metrics["roc_auc"] == pytest.approx(0.75)
    # Recall steps 0 -> 0.5 at precision 1, then 0.5 -> 1 at precision 2/3.
    assert metrics["pr_auc"] == pytest.approx(0.5 * 1 + 0.5 * 2 / 3)


def test_threshold_is_inclusive_and_reported():
    metrics = binary_metrics([1, 0], [0.3, 0.2], threshold=0.3)
    assert metrics["threshold"] == 0.3
    assert metrics["confusion"] == {"tp": 1, "fp": 0, "tn": 1, "fn": 0}


def test_values_are_plain_python_and_json_serialisable():
    rng = np.random.default_rng(0)
    metrics = binary_metrics(rng.integers(0, 2, 50), rng.random(50).astype(np.float32))
    json.dumps(metrics)
    for key in ("n", "n_positive", "n_negative"):
        assert type(metrics[key]) is int
    for key in ("threshold", "accuracy", "precision", "recall", "f1", "mcc", "roc_auc", "pr_auc"):
        assert type(metrics[key]) is float
    assert all(type(count) is int for count in metrics["confusion"].values())


def test_ties_across_classes_count_half():
    # One positive/negative pair tied at 0.5, one clearly separated pair.
    labels = np.array([1, 0, 1, 0])
    probs = np.array([0.5, 0.5, 0.9, 0.1])
    # Pairs: (0.5,0.5) tie, (0.5,0.1) win, (0.9,0.5) win, (0.9,0.1) win.
    assert roc_auc(labels, probs) == pytest.approx(3.5 / 4)
    # Steps: 0.9 -> R=0.5,P=1; 0.5 block -> R=1,P=2/3.
    assert average_precision(labels, probs) == pytest.approx(0.5 + 0.5 * 2 / 3)


def test_all_same_score_gives_chance_auc_and_prevalence_ap():
    labels = [1, 0, 0, 1, 0]
    probs = [0.7] * 5
    assert roc_auc(labels, probs) == pytest.approx(0.5)
    assert average_precision(labels, probs) == pytest.approx(0.4)
    fpr, tpr, thresholds = roc_curve(labels, probs)
    np.testing.assert_allclose(fpr, [0, 1])
    np.testing.assert_allclose(tpr, [0, 1])
    assert thresholds[0] == np.inf and thresholds[1] == 0.7


@pytest.mark.parametrize("labels", [[1, 1, 1], [0, 0]])
def test_single_class_has_no_auc(labels):
    metrics = binary_metrics(labels, np.linspace(0.1, 0.9, len(labels)))
    assert metrics["roc_auc"] is None
    assert metrics["pr_auc"] is None
    assert json.loads(json.dumps(metrics))["roc_auc"] is None
    with pytest.raises(ValueError):
        roc_curve(labels, np.zeros(len(labels)))


def test_zero_denominators_are_undefined_not_zero():
    # Nothing predicted positive: precision and mcc have zero denominators; recall and f1 do not.
    metrics = binary_metrics([1, 0, 1], [0.1, 0.2, 0.3], threshold=0.9)
    assert metrics["confusion"] == {"tp": 0, "fp": 0, "tn": 1, "fn": 2}
    assert metrics["precision"] is None
    assert metrics["mcc"] is None
    assert metrics["recall"] == 0.0
    assert metrics["f1"] == 0.0
    assert json.loads(json.dumps(metrics))["precision"] is None  # written as null


def test_no_error_in_a_group_leaves_recall_and_f1_undefined_like_auc():
    # A bucket of correct calls only, all predicted correct: like roc_auc, recall, f1, precision
    # and mcc are undefined (null), while accuracy is defined.
    metrics = binary_metrics([0, 0, 0], [0.1, 0.2, 0.3], threshold=0.5)
    assert {key for key in NULLABLE_METRICS if metrics[key] is None} == set(NULLABLE_METRICS)
    assert metrics["accuracy"] == 1.0


def test_perfect_and_inverted_classifiers():
    labels = np.array([0, 0, 0, 1, 1])
    scores = np.array([0.1, 0.2, 0.3, 0.8, 0.9])
    perfect = binary_metrics(labels, scores)
    assert perfect["roc_auc"] == pytest.approx(1.0)
    assert perfect["pr_auc"] == pytest.approx(1.0)
    assert perfect["mcc"] == pytest.approx(1.0)
    inverted = binary_metrics(labels, 1 - scores)
    assert inverted["roc_auc"] == pytest.approx(0.0)
    assert inverted["mcc"] == pytest.approx(-1.0)
    assert inverted["accuracy"] == 0.0


def test_random_scores_give_chance_auc_on_large_n():
    rng = np.random.default_rng(1)
    labels = rng.integers(0, 2, 200_000)
    probs = rng.random(200_000)
    metrics = binary_metrics(labels, probs)
    assert metrics["roc_auc"] == pytest.approx(0.5, abs=0.01)
    assert metrics["pr_auc"] == pytest.approx(labels.mean(), abs=0.01)


@pytest.mark.parametrize("seed", range(5))
def test_roc_auc_matches_pairwise_brute_force_with_ties(seed):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 2, 300)
    probs = rng.integers(0, 12, 300) / 11  # few distinct values: many ties
    assert roc_auc(labels, probs) == pytest.approx(pairwise_auc(labels, probs), abs=1e-12)


def test_average_precision_matches_step_definition_brute_force():
    rng = np.random.default_rng(7)
    labels = rng.integers(0, 2, 200)
    probs = rng.integers(0, 20, 200) / 19
    total, previous_recall = 0.0, 0.0
    for threshold in np.unique(probs)[::-1]:
        predicted = probs >= threshold
        recall = (predicted & (labels == 1)).sum() / labels.sum()
        precision = (predicted & (labels == 1)).sum() / predicted.sum()
        total += (recall - previous_recall) * precision
        previous_recall = recall
    assert average_precision(labels, probs) == pytest.approx(total, abs=1e-12)


def test_precision_recall_curve_shape():
    precision, recall, thresholds = precision_recall_curve([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    np.testing.assert_allclose(precision, [1, 1, 0.5, 2 / 3, 0.5])
    np.testing.assert_allclose(recall, [0, 0.5, 0.5, 1, 1])
    np.testing.assert_allclose(thresholds, [np.inf, 0.8, 0.4, 0.35, 0.1])


def test_grouped_metrics_sorted_by_group():
    labels = [0, 1, 0, 1, 1]
    probs = [0.2, 0.9, 0.6, 0.5, 0.7]
    groups = [2, 2, 0, 0, 5]
    results = grouped_metrics(labels, probs, groups, threshold=0.5)
    assert [result["group"] for result in results] == [0, 2, 5]
    assert type(results[0]["group"]) is int
    assert results[0]["confusion"] == {"tp": 1, "fp": 1, "tn": 0, "fn": 0}
    assert results[0]["roc_auc"] == 0.0
    assert results[1]["roc_auc"] == 1.0
    assert results[2]["n"] == 1 and results[2]["roc_auc"] is None
    assert results[2]["precision"] == 1.0 and results[2]["mcc"] is None  # one class: mcc undefined
    assert set(results[1]) == METRIC_KEYS | {"group"}
    json.dumps(results)


@pytest.mark.parametrize(
    "labels, probs",
    [([], []), ([0, 1], [0.5]), ([0, 2], [0.1, 0.2]), ([0, 1], [0.1, np.nan])],
)
def test_invalid_inputs_raise(labels, probs):
    with pytest.raises(ValueError):
        binary_metrics(labels, probs)
