"""The decision threshold: a number from the config, or `auto`, chosen on the validation split.

`auto` takes the threshold that maximises F1 (errors are the positive class) on the validation
windows' predictions: among the distinct validation scores, the cut with the highest F1 (the
highest cut on ties), placed halfway to the next lower score so that a test window scoring
between the two is treated as the validation window just above it would be. The test split is
never looked at. When the validation split cannot choose (no windows, or one class), the
threshold is FALLBACK_THRESHOLD and the reason is recorded.

The choice is written to metrics.json as artifacts.THRESHOLD_CHOICE_FIELDS.
"""

from __future__ import annotations

import numpy as np

from workflow_scripts.artifacts import THRESHOLD_CHOICE_FIELDS
from workflow_scripts.evaluation.metrics import f1_at_each_cut

AUTO = "auto"
CRITERION = "f1"
CHOICE_SPLIT = "val"
FALLBACK_THRESHOLD = 0.5  # P(error) >= 0.5: the classifier's own decision


def is_auto(setting) -> bool:
    return setting == AUTO


def best_f1_threshold(labels, probs) -> tuple[float, float]:
    """(threshold, F1 at it) maximising F1 for `prob >= threshold`; labels need both classes."""
    f1, cuts, next_lower = f1_at_each_cut(labels, probs)
    best = int(np.argmax(f1))  # the first maximum: the highest cut on ties
    lower = next_lower[best]
    threshold = cuts[best] if not np.isfinite(lower) else (cuts[best] + lower) / 2
    return float(threshold), float(f1[best])


def choice_document(mode: str, threshold: float, labels=None, **fields) -> dict:
    """artifacts.THRESHOLD_CHOICE_FIELDS; n and n_positive describe the validation windows."""
    document = {
        "mode": mode,
        "threshold": float(threshold),
        "criterion": None,
        "split": None,
        "n": None if labels is None else int(np.size(labels)),
        "n_positive": None if labels is None else int(np.sum(labels)),
        "criterion_value": None,
        "reason": None,
        **fields,
    }
    return {name: document[name] for name in THRESHOLD_CHOICE_FIELDS}


def choose_threshold(setting, val_labels=None, val_probs=None) -> dict:
    """The threshold to use and how it was chosen. `setting` is evaluate.threshold: a number in
    [0, 1] (used as it is) or "auto" (then val_labels and val_probs are the validation split's)."""
    if not is_auto(setting):
        return choice_document("fixed", float(setting), reason="evaluate.threshold is a number")
    labels = np.asarray(val_labels if val_labels is not None else [], dtype=np.int64).reshape(-1)
    probs = np.asarray(val_probs if val_probs is not None else [], dtype=float).reshape(-1)
    common = {"criterion": CRITERION, "split": CHOICE_SPLIT}
    if labels.size == 0 or labels.min() == labels.max():
        why = "no windows" if labels.size == 0 else "one class only"
        return choice_document(
            AUTO,
            FALLBACK_THRESHOLD,
            labels,
            **common,
            reason=f"the validation split has {why}: fell back to {FALLBACK_THRESHOLD}",
        )
    threshold, f1 = best_f1_threshold(labels, probs)
    return choice_document(AUTO, threshold, labels, **common, criterion_value=f1)
