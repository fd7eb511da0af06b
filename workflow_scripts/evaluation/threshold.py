"""The decision threshold: a number from the config, or `auto`, chosen on the validation split.

`auto` takes the threshold that maximises F1 (errors are the positive class) on the validation
windows' predictions;  `precision:P` the lowest one whose validation precision is at least P
(the most errors found at that precision; the highest cut when no cut reaches P). Either way: among the distinct validation scores, the cut with the highest F1 (the
highest cut on ties), placed halfway to the next lower score so that a test window scoring
between the two is treated as the validation window just above it would be. The test split is
never looked at. When the validation split cannot choose (no windows, or one class), the
threshold is FALLBACK_THRESHOLD and the reason is recorded.

The choice is written to metrics.json as artifacts.THRESHOLD_CHOICE_FIELDS, with the share of
validation windows it flags: a weak model's F1-best cut can flag most windows (F1 rewards recall),
and `warning` then says so and names the precision target that would not.
"""

from __future__ import annotations

import numpy as np

from workflow_scripts.artifacts import THRESHOLD_CHOICE_FIELDS
from workflow_scripts.metrics import counts_at_distinct_scores, f1_at_each_cut

AUTO = "auto"
PRECISION_PREFIX = "precision:"
CRITERION = "f1"
MOST_FLAGGED = 0.5  # a chosen cut flagging more of the validation windows than this is warned about
CHOICE_SPLIT = "val"
FALLBACK_THRESHOLD = 0.5  # P(error) >= 0.5: the classifier's own decision


def is_auto(setting) -> bool:
    """Chosen on the validation split: `auto` or `precision:P`."""
    return setting == AUTO or precision_target(setting) is not None


def precision_target(setting) -> float | None:
    if isinstance(setting, str) and setting.startswith(PRECISION_PREFIX):
        return float(setting[len(PRECISION_PREFIX) :])
    return None


def precision_threshold(labels, probs, target: float) -> tuple[float, float, bool]:
    """(threshold, precision at it, reached) for the lowest cut with precision >= target."""
    true_positives, false_positives, cuts = counts_at_distinct_scores(
        np.asarray(labels), np.asarray(probs, float)
    )
    precision = true_positives / (true_positives + false_positives)
    reaching = np.flatnonzero(precision >= target)
    best = int(reaching[-1]) if reaching.size else 0
    lower = cuts[best + 1] if best + 1 < cuts.size else -np.inf
    threshold = cuts[best] if not np.isfinite(lower) else (cuts[best] + lower) / 2
    return float(threshold), float(precision[best]), bool(reaching.size)


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
        "flagged_share": None,
        "warning": None,
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
    target = precision_target(setting)
    if target is None:
        threshold, f1 = best_f1_threshold(labels, probs)
        document = choice_document(AUTO, threshold, labels, **common, criterion_value=f1)
    else:
        threshold, precision, reached = precision_threshold(labels, probs, target)
        reason = (
            None
            if reached
            else f"no cut reaches precision {target:g} on the validation split: the highest cut"
        )
        document = choice_document(
            setting,
            threshold,
            labels,
            criterion="precision",
            split=CHOICE_SPLIT,
            criterion_value=precision,
            reason=reason,
        )
    return with_flagged_share(document, labels, probs)


def with_flagged_share(document: dict, labels: np.ndarray, probs: np.ndarray) -> dict:
    flagged = float(np.mean(probs >= document["threshold"]))
    document["flagged_share"] = flagged
    if flagged > MOST_FLAGGED:
        document["warning"] = (
            f"this cut flags {flagged:.0%} of the validation windows ({int(labels.sum())} of {labels.size} are errors): "
            "the model separates the classes weakly; for calls a user can act on, set evaluate.threshold "
            "to precision:0.9 (or a number)"
        )
    return document
