"""Binary classification metrics for error-sequence classifiers (numpy only), below the package's
folders: evaluation/, training/ (validation metrics) and sites/ compute them alike.

Label 1 means "the splice-site model made an error here", 0 a correct call;
`probs` are the classifier's P(label == 1). A window is predicted positive when
its probability is >= the threshold. A metric that is undefined (a zero denominator, or
one class only for the curves) is None, which metrics.json writes as null.
"""

from __future__ import annotations

import math

import numpy as np

from workflow_scripts.artifacts import CONFUSION_FIELDS


def _as_arrays(labels, probs) -> tuple[np.ndarray, np.ndarray]:
    """Validate and convert inputs to (int labels, float probabilities)."""
    label_array = np.asarray(labels).reshape(-1)
    prob_array = np.asarray(probs, dtype=float).reshape(-1)
    if label_array.shape != prob_array.shape:
        raise ValueError(f"labels ({label_array.size}) and probs ({prob_array.size}) differ in length")
    if label_array.size == 0:
        raise ValueError("metrics need at least one example")
    if not np.isin(label_array, (0, 1)).all():
        raise ValueError("labels must be 0 or 1")
    if not np.isfinite(prob_array).all():
        raise ValueError("probs must be finite numbers")
    return label_array.astype(np.int64), prob_array


def counts_at_distinct_scores(labels: np.ndarray, probs: np.ndarray):
    """Cumulative (true positives, false positives, score) at each distinct score, high to low.

    Tied scores are grouped into one step, so ties are counted once as a block.
    """
    order = np.argsort(-probs, kind="mergesort")
    sorted_probs = probs[order]
    sorted_labels = labels[order]
    last_of_each_score = np.append(np.flatnonzero(np.diff(sorted_probs)), sorted_probs.size - 1)
    true_positives = np.cumsum(sorted_labels)[last_of_each_score]
    false_positives = (last_of_each_score + 1) - true_positives
    return true_positives, false_positives, sorted_probs[last_of_each_score]


def _require_both_classes(labels: np.ndarray) -> None:
    if labels.min() == labels.max():
        raise ValueError("curve is undefined when only one class is present")


def roc_curve(labels, probs) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(false positive rate, true positive rate, thresholds), starting at (0, 0) with threshold +inf."""
    label_array, prob_array = _as_arrays(labels, probs)
    _require_both_classes(label_array)
    true_positives, false_positives, thresholds = counts_at_distinct_scores(label_array, prob_array)
    n_positive = label_array.sum()
    n_negative = label_array.size - n_positive
    fpr = np.concatenate([[0.0], false_positives / n_negative])
    tpr = np.concatenate([[0.0], true_positives / n_positive])
    return fpr, tpr, np.concatenate([[np.inf], thresholds])


def precision_recall_curve(labels, probs) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(precision, recall, thresholds) in order of decreasing threshold.

    The first point is (precision 1, recall 0) at threshold +inf, so the arrays
    all have the same length and the curve starts on the y axis.
    """
    label_array, prob_array = _as_arrays(labels, probs)
    _require_both_classes(label_array)
    true_positives, false_positives, thresholds = counts_at_distinct_scores(label_array, prob_array)
    precision = true_positives / (true_positives + false_positives)
    recall = true_positives / label_array.sum()
    return (
        np.concatenate([[1.0], precision]),
        np.concatenate([[0.0], recall]),
        np.concatenate([[np.inf], thresholds]),
    )


def roc_auc(labels, probs) -> float | None:
    """Area under the ROC curve (ties count half, as in Mann-Whitney U); None for one class."""
    label_array, prob_array = _as_arrays(labels, probs)
    if label_array.min() == label_array.max():
        return None
    fpr, tpr, _ = roc_curve(label_array, prob_array)
    return float(np.trapezoid(tpr, fpr))


def average_precision(labels, probs) -> float | None:
    """Step-wise area under the PR curve: sum of (R_n - R_{n-1}) * P_n; None for one class."""
    label_array, prob_array = _as_arrays(labels, probs)
    if label_array.min() == label_array.max():
        return None
    precision, recall, _ = precision_recall_curve(label_array, prob_array)
    return float(np.sum(np.diff(recall) * precision[1:]))


def f1_at_each_cut(labels, probs) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(F1, cut, next lower score) for predicting 1 when prob >= cut, at every distinct score
    (high to low); next lower score is -inf for the lowest. Needs both classes."""
    label_array, prob_array = _as_arrays(labels, probs)
    _require_both_classes(label_array)
    true_positives, false_positives, cuts = counts_at_distinct_scores(label_array, prob_array)
    # 2 tp + fp + fn = tp + fp + (all positives)
    f1 = 2 * true_positives / (true_positives + false_positives + label_array.sum())
    return f1, cuts, np.append(cuts[1:], -np.inf)


def curve_areas(labels: np.ndarray, probs: np.ndarray) -> tuple[float, float]:
    """(roc_auc, average_precision) from one sort, for resampling loops: `labels` must already be a
    0/1 integer array holding both classes and `probs` finite floats (not checked again here)."""
    true_positives, false_positives, _ = counts_at_distinct_scores(labels, probs)
    tpr = np.concatenate([[0.0], true_positives / true_positives[-1]])
    fpr = np.concatenate([[0.0], false_positives / false_positives[-1]])
    precision = true_positives / (true_positives + false_positives)
    return float(np.trapezoid(tpr, fpr)), float(np.sum(np.diff(tpr) * precision))


def _ratio_or_none(numerator: float, denominator: float) -> float | None:
    """numerator / denominator; None (undefined) when the denominator is 0."""
    return float(numerator / denominator) if denominator else None


def confusion_counts(labels, probs, threshold: float = 0.5) -> dict[str, int]:
    """Counts of tp, fp, tn, fn when predicting 1 for probs >= threshold."""
    label_array, prob_array = _as_arrays(labels, probs)
    predicted = prob_array >= threshold
    actual = label_array == 1
    return {
        "tp": int(np.sum(predicted & actual)),
        "fp": int(np.sum(predicted & ~actual)),
        "tn": int(np.sum(~predicted & ~actual)),
        "fn": int(np.sum(~predicted & actual)),
    }


def matthews_correlation(tp: int, fp: int, tn: int, fn: int) -> float | None:
    """Matthews correlation coefficient; None (undefined) when any marginal total is 0."""
    denominator = math.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    return _ratio_or_none(tp * tn - fp * fn, denominator)


def binary_metrics(labels, probs, threshold: float = 0.5) -> dict:
    """artifacts.METRIC_FIELDS as plain Python values (JSON-serialisable); undefined ones None."""
    label_array, prob_array = _as_arrays(labels, probs)
    confusion = confusion_counts(label_array, prob_array, threshold)
    tp, fp, tn, fn = (confusion[key] for key in CONFUSION_FIELDS)
    precision = _ratio_or_none(tp, tp + fp)
    recall = _ratio_or_none(tp, tp + fn)
    return {
        "n": int(label_array.size),
        "n_positive": tp + fn,
        "n_negative": tn + fp,
        "threshold": float(threshold),
        "accuracy": _ratio_or_none(tp + tn, label_array.size),
        "precision": precision,
        "recall": recall,
        "f1": _ratio_or_none(2 * tp, 2 * tp + fp + fn),
        "mcc": matthews_correlation(tp, fp, tn, fn),
        "roc_auc": roc_auc(label_array, prob_array),
        "pr_auc": average_precision(label_array, prob_array),
        "confusion": confusion,
    }


def grouped_metrics(labels, probs, groups, threshold: float = 0.5) -> list[dict]:
    """binary_metrics for each distinct group value (key "group"), sorted by group."""
    label_array, prob_array = _as_arrays(labels, probs)
    group_array = np.asarray(groups).reshape(-1)
    if group_array.shape != label_array.shape:
        raise ValueError(f"groups ({group_array.size}) and labels ({label_array.size}) differ in length")
    results = []
    for group in np.unique(group_array):
        in_group = group_array == group
        metrics = binary_metrics(label_array[in_group], prob_array[in_group], threshold)
        results.append({"group": group.item(), **metrics})
    return results
