"""evaluate_base's metrics (base_training/metrics.py) against OpenSpliceAI's own functions
(openspliceai 0.0.7 train_base/utils.py: print_topl_statistics for top-k accuracy and AUPRC,
`metrics` for the per-nucleotide argmax precision/recall/F1) and scikit-learn's on the same arrays."""

from __future__ import annotations

import re

import numpy as np
import pytest
from sklearn.metrics import average_precision_score, precision_recall_fscore_support

from workflow_scripts.base_training.metrics import average_precision, site_metrics, top_k_accuracy


def labelled_arrays(seed: int, n: int = 20_000, sites: int = 60):
    """Labels 0/1/2 and softmax-like probabilities that rank most true sites high."""
    rng = np.random.default_rng(seed)
    labels = np.zeros(n, dtype=np.int64)
    where = rng.choice(n, 2 * sites, replace=False)
    labels[where[:sites]], labels[where[sites:]] = 1, 2
    logits = rng.normal(0, 1, (n, 3))
    logits[:, 0] += 4
    logits[np.arange(n), labels] += rng.normal(4, 2, n) * (labels > 0)
    probabilities = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    return labels, probabilities


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_top_k_and_auprc_equal_openspliceais_print_topl_statistics(seed, tmp_path):
    utils = pytest.importorskip("openspliceai.train_base.utils")
    labels, probabilities = labelled_arrays(seed)
    ours = site_metrics(labels, probabilities)
    for name, channel in (("acceptor", 1), ("donor", 2)):
        truth = (labels == channel).astype(np.float32)
        scores = probabilities[:, channel].astype(np.float32)
        out = tmp_path / f"{name}.tsv"
        top1, auprc = utils.print_topl_statistics(truth, scores, str(out), ss_type=name)
        row = [float(value) for value in out.read_text().split()]
        ours32 = {"top_k": top_k_accuracy(truth == 1, scores), "auprc": average_precision(truth == 1, scores)}
        assert [ours32["top_k"][k] for k in ("0.5", "1.0", "2.0", "4.0")] == pytest.approx(row[:4], abs=1e-4)
        assert ours32["auprc"] == pytest.approx(auprc, abs=1e-9)
        assert ours[name]["top_k"]["1.0"] == pytest.approx(top1, abs=1e-6)
        assert ours[name]["sites"] == int(row[9])


def test_auprc_equals_scikit_learn_with_ties():
    rng = np.random.default_rng(5)
    truth = rng.random(5_000) < 0.02
    scores = np.round(rng.random(5_000) + truth * 0.3, 2)  # many tied scores
    assert average_precision(truth, scores) == pytest.approx(
        average_precision_score(truth, scores), abs=1e-12
    )


def test_argmax_f1_equals_openspliceais_metrics(capsys):
    torch = pytest.importorskip("torch")
    utils = pytest.importorskip("openspliceai.train_base.utils")
    labels, probabilities = labelled_arrays(7)
    one_hot = np.eye(3, dtype=np.float32)[labels].T[None]  # (1, 3, n), as OpenSpliceAI's batches
    utils.metrics(
        torch.from_numpy(probabilities.T[None].astype(np.float32)), torch.from_numpy(one_hot), {}, "test"
    )
    printed = capsys.readouterr().out
    ours = site_metrics(labels, probabilities)
    for name in ("acceptor", "donor"):
        found = re.search(
            rf"Class {name}\t: Accuracy=[^,]+, Precision=([^,]+), Recall=([^,]+), F1=(\S+)", printed
        )
        assert found, printed
        assert [ours[name]["argmax"][key] for key in ("precision", "recall", "f1")] == pytest.approx(
            [float(value) for value in found.groups()], abs=1e-9
        )
    reference = precision_recall_fscore_support(
        labels, probabilities.argmax(axis=1), average=None, zero_division=0
    )
    assert ours["donor"]["argmax"]["f1"] == pytest.approx(reference[2][2])
