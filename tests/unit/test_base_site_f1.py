"""errorseq's site F1 on base_data's blocks (base_training/site_f1.py): calls are local maxima at or
above the threshold, a site is a TP with a call of its type within ±window, a call without a site
there an FP, and nothing reaches across a block's end."""

from __future__ import annotations

import numpy as np

from workflow_scripts.base_training.site_f1 import f1_of, peaks, unit_counts


def test_calls_are_local_maxima_and_a_plateau_calls_once():
    scores = np.array([0.1, 0.6, 0.9, 0.7, 0.2, 0.8, 0.8, 0.1, 0.55])
    blocks = np.zeros(9, dtype=np.int64)
    assert np.flatnonzero(peaks(scores, blocks, 0.5, 2)).tolist() == [2, 5]  # 0.55 sees the 0.8 two nt left
    assert np.flatnonzero(peaks(scores, blocks, 0.5, 0)).tolist() == [1, 2, 3, 5, 6, 8]
    blocks[7:] = 1  # the 0.8 at 6 no longer sees past its block; 0.55 at 8 is its block's maximum
    assert np.flatnonzero(peaks(scores, blocks, 0.5, 2)).tolist() == [2, 5, 8]


def test_sites_and_calls_counted_per_unit_within_the_window():
    n = 100
    labels = np.zeros(n, dtype=np.int64)
    labels[[10, 50]] = 2  # donors
    labels[70] = 1  # an acceptor
    probabilities = np.zeros((n, 3))
    probabilities[:, 0] = 1
    probabilities[12, 2] = 0.9  # 2 nt from the donor at 10: TP
    probabilities[30, 2] = 0.7  # no donor near: FP
    probabilities[70, 2] = 0.8  # a donor call on the acceptor: FP (wrong type), the acceptor an FN
    probabilities[53, 2] = 0.6  # 3 nt from the donor at 50: outside window 2, so FP + FN
    units = np.where(np.arange(n) < 40, 0, 1)
    blocks = np.zeros(n, dtype=np.int64)
    counts = unit_counts(labels, probabilities, blocks, units, 2, threshold=0.5, window=2, radius=2)
    assert counts.tolist() == [[1, 1, 0], [0, 2, 2]]  # TP, FP, FN per unit
    f1 = f1_of(counts)
    assert (f1["tp"], f1["fp"], f1["fn"]) == (1, 3, 2) and f1["precision"] == 0.25
    wider = unit_counts(labels, probabilities, blocks, units, 2, threshold=0.5, window=3, radius=2)
    assert wider.sum(axis=0).tolist() == [2, 2, 1]
    blocks[51:] = 1  # the call at 53 and the donor at 50 in different blocks: never matched
    cut = unit_counts(labels, probabilities, blocks, units, 2, threshold=0.5, window=3, radius=2)
    assert cut.sum(axis=0).tolist() == [1, 3, 2]
