"""OpenSpliceAI's evaluation metrics, computed here (numpy only), for one site type at a time over
the labelled positions of the test blocks:

- top-k accuracy at k = 0.5, 1, 2 and 4 x the true sites: of the k positions the model scores
  highest, the share that are true sites, over min(k, true sites) (SpliceAI's top-k; openspliceai
  0.0.7 train_base/utils.py: print_topl_statistics);
- AUPRC: average precision, sum over thresholds of (recall step) x precision, one threshold per
  distinct score (scikit-learn's average_precision_score, which OpenSpliceAI calls);
- per-nucleotide argmax precision, recall and F1 of each class (OpenSpliceAI's `metrics`:
  precision_recall_fscore_support on the argmax over the three channels).

tests/unit/test_base_metrics.py checks each against openspliceai's and scikit-learn's own functions
on the same arrays. OpenSpliceAI computes them on at most 1,000 windows that contain a site; here
every labelled position of the test blocks counts.
"""

from __future__ import annotations

import numpy as np

TOP_K = (0.5, 1.0, 2.0, 4.0)
CHANNELS = {"acceptor": 1, "donor": 2}


def top_k_accuracy(truth: np.ndarray, scores: np.ndarray, factors=TOP_K) -> dict[str, float]:
    """{str(factor): accuracy} for `truth` (bool per position) and `scores`."""
    true = np.flatnonzero(truth)
    order = np.argsort(scores, kind="stable")
    result = {}
    for factor in factors:
        k = min(int(factor * len(true)), len(scores))
        if k == 0:
            result[str(factor)] = float("nan")
            continue
        hits = np.intersect1d(true, order[-k:]).size
        result[str(factor)] = hits / min(k, len(true))
    return result


def average_precision(truth: np.ndarray, scores: np.ndarray) -> float:
    """Area under the precision-recall curve as average precision (step-wise, no interpolation)."""
    truth = np.asarray(truth, dtype=bool)
    positives = int(truth.sum())
    if positives == 0:
        return float("nan")
    order = np.argsort(-scores, kind="stable")
    ordered, hits = scores[order], truth[order]
    last_of_value = np.r_[
        np.flatnonzero(np.diff(ordered)), len(ordered) - 1
    ]  # one threshold per distinct score
    true_positives = np.cumsum(hits)[last_of_value]
    predicted = last_of_value + 1
    precision = true_positives / predicted
    recall = true_positives / positives
    steps = np.diff(np.r_[0.0, recall])
    return float((steps * precision).sum())


def argmax_scores(labels: np.ndarray, predicted: np.ndarray, cls: int) -> dict[str, float]:
    """Precision, recall and F1 of class `cls` for argmax predictions (0 where undefined)."""
    tp = int(((predicted == cls) & (labels == cls)).sum())
    called, present = int((predicted == cls).sum()), int((labels == cls).sum())
    precision = tp / called if called else 0.0
    recall = tp / present if present else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1}


def site_metrics(labels: np.ndarray, probabilities: np.ndarray) -> dict[str, dict]:
    """labels (n,) in {0, 1, 2}; probabilities (n, 3) [neither, acceptor, donor] -> per site type:
    true sites, top-k accuracies, AUPRC and the argmax precision/recall/F1."""
    predicted = probabilities.argmax(axis=1)
    result = {}
    for name, channel in CHANNELS.items():
        truth = labels == channel
        scores = probabilities[:, channel]
        result[name] = {
            "sites": int(truth.sum()),
            "top_k": top_k_accuracy(truth, scores),
            "auprc": average_precision(truth, scores),
            "argmax": argmax_scores(labels, predicted, channel),
        }
    return result
