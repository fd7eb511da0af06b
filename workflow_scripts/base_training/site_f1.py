"""errorseq's site F1 on base_data's test blocks, counted as make_calls and site_calls count
(docs/sites.md): a model's calls of one type are its local score maxima (the highest within
±`peak_radius` nt; on a plateau the first) at or above `threshold`; an annotated site is a TP when a
call of its type lies within ±`window` nt, else an FN; a call with no site of its type within
±`window` is an FP. Counted per split unit (gene cluster), so a bootstrap over the units only sums
counts again. Positions are a block's core in its reading direction; windows never cross blocks.
"""

from __future__ import annotations

import numpy as np

from workflow_scripts.base_training.metrics import CHANNELS

THRESHOLDS = tuple(round(0.05 * step, 2) for step in range(1, 20))  # 0.05 ... 0.95: the picking grid


def shifted(values: np.ndarray, blocks: np.ndarray, offset: int, fill) -> np.ndarray:
    """values[i + offset] where that position is in i's block, else `fill`."""
    out = np.full(values.shape, fill, dtype=values.dtype)
    if offset > 0:
        same = blocks[offset:] == blocks[:-offset]
        out[:-offset] = np.where(same, values[offset:], fill)
    elif offset < 0:
        same = blocks[:offset] == blocks[-offset:]
        out[-offset:] = np.where(same, values[:offset], fill)
    else:
        out[:] = values
    return out


def peaks(scores: np.ndarray, blocks: np.ndarray, threshold: float, radius: int) -> np.ndarray:
    """Bool per position: a call (local maximum at or above the threshold)."""
    called = scores >= threshold
    for offset in range(1, radius + 1):
        called &= ~(shifted(scores, blocks, -offset, -np.inf) >= scores)  # an equal left neighbour wins
        called &= ~(shifted(scores, blocks, offset, -np.inf) > scores)
    return called


def near(marks: np.ndarray, blocks: np.ndarray, window: int) -> np.ndarray:
    """Bool per position: a mark within ±window in the same block."""
    found = marks.copy()
    for offset in range(1, window + 1):
        found |= shifted(marks, blocks, offset, False) | shifted(marks, blocks, -offset, False)
    return found


def unit_counts(
    labels: np.ndarray,
    probabilities: np.ndarray,
    blocks: np.ndarray,
    units: np.ndarray,
    n_units: int,
    threshold: float,
    window: int,
    radius: int,
) -> np.ndarray:
    """(n_units, 3) TP, FP, FN per unit, both site types summed; `units` numbered 0..n_units-1."""
    counts = np.zeros((n_units, 3), dtype=np.int64)
    for channel in CHANNELS.values():
        sites = labels == channel
        calls = peaks(probabilities[:, channel], blocks, threshold, radius)
        hit = sites & near(calls, blocks, window)
        false = calls & ~near(sites, blocks, window)
        for column, marks in enumerate((hit, false, sites & ~hit)):
            counts[:, column] += np.bincount(units[marks], minlength=n_units)
    return counts


def f1_of(counts: np.ndarray) -> dict[str, float]:
    tp, fp, fn = (int(value) for value in counts.sum(axis=0))
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"f1": f1, "precision": precision, "recall": recall, "tp": tp, "fp": fp, "fn": fn}


def f1_by_threshold(
    labels: np.ndarray, probabilities: np.ndarray, blocks: np.ndarray, window: int, radius: int
) -> dict[float, float]:
    """Site F1 of one model's calls at each of THRESHOLDS, all positions one unit."""
    units = np.zeros(len(labels), dtype=np.int64)
    return {
        threshold: f1_of(unit_counts(labels, probabilities, blocks, units, 1, threshold, window, radius))[
            "f1"
        ]
        for threshold in THRESHOLDS
    }


def best_threshold(f1: dict[float, float]) -> float:
    """The threshold of the best site F1, the lowest of equals."""
    return max(f1, key=lambda threshold: (f1[threshold], -threshold))
