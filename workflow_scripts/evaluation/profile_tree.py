"""score_profile_tree: gradient-boosted trees on the base model's score profiles around the site.

What a MetaSpliceAI-style meta-model sees, without the sequence: scikit-learn's
HistGradientBoostingClassifier on the donor AND acceptor profiles (calling/score_profiles.py) at the
site and `flank` nt either side (evaluate.profile_flank), 2 * (2 * flank + 1) features, plus
is-donor. The scores enter raw (probabilities): a tree's splits and its quantile bins are the
same under any monotone transform such as logit. A base a window does not hold (profile_flank
beyond the window's flank) is 0.0, the profiles' value for an unscored position.

Fitted on train (class_weight balanced, random_state = train.seed). Its number of boosting
iterations is chosen on the validation split: one fit of MAX_ITER iterations, the validation
ROC-AUC after each (staged predictions; the first k iterations of that fit are the fit with k),
the best kept (the fewer iterations on ties); the built-in early stopping is off, so train alone
is never split. When the validation split cannot rank (no windows, one class) it is FALLBACK_ITER.
Unavailable (BaselineUnavailable) without the profile columns, which extract writes only when the
pipeline made the calls (calling.start scores or annotation).
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import islice

import numpy as np
import polars as pl
from sklearn.ensemble import HistGradientBoostingClassifier

from workflow_scripts.calling.score_profiles import PROFILE_COLUMNS, UNSCORED, has_profiles
from workflow_scripts.evaluation.baselines import BaselineUnavailable, site_indices
from workflow_scripts.metrics import roc_auc

MAX_ITER = 300
FALLBACK_ITER = 100  # when the validation split cannot rank
LEARNING_RATE = 0.1


OUT_OF_WINDOW = np.iinfo(np.int32).max  # a list index past every window: read as null, then UNSCORED


def profile_window(profiles: pl.Series, sites: np.ndarray, flank: int) -> np.ndarray:
    """(windows, 2*flank+1) values of one profile column from site - flank to site + flank
    (reading direction); UNSCORED where that base lies outside the window or the site is unknown."""
    frame = pl.DataFrame({"profile": profiles})
    columns = []
    for offset in range(-flank, flank + 1):
        index = np.where((sites >= 0) & (sites + offset >= 0), sites + offset, OUT_OF_WINDOW)
        value = pl.col("profile").list.get(pl.lit(pl.Series(index)), null_on_oob=True)
        columns.append(value.fill_null(UNSCORED).cast(pl.Float32).alias(f"{offset:+d}"))
    return frame.select(columns).to_numpy()


def feature_names(flank: int) -> list[str]:
    offsets = [f"{o:+d}" for o in range(-flank, flank + 1)]
    return [f"{kind}{o}" for kind in PROFILE_COLUMNS for o in offsets] + ["donor"]


def profile_features(frame: pl.DataFrame, flank: int, full_length: int) -> np.ndarray:
    """The donor profile, the acceptor profile (each 2*flank+1 around the site), then is-donor."""
    sites = site_indices(frame, full_length)
    blocks = [profile_window(frame[column], sites, flank) for column in PROFILE_COLUMNS.values()]
    donor = (frame["splice_type"] == "donor").to_numpy() if "splice_type" in frame.columns else None
    is_donor = np.zeros(frame.height) if donor is None else donor.astype(np.float32)
    return np.column_stack([*blocks, is_donor])


def check_profiles(*frames: pl.DataFrame) -> None:
    for frame in frames:
        if not has_profiles(frame.columns):
            raise BaselineUnavailable(
                "the windows have no score profiles (donor_scores, acceptor_scores): extract writes "
                "them only when the pipeline made the calls (calling.start scores or annotation)"
            )


def fit_trees(features: np.ndarray, labels: np.ndarray, seed: int) -> HistGradientBoostingClassifier:
    model = HistGradientBoostingClassifier(
        max_iter=MAX_ITER,
        learning_rate=LEARNING_RATE,
        early_stopping=False,
        class_weight="balanced",
        random_state=seed,
    )
    return model.fit(features, labels)


def staged_scores(model: HistGradientBoostingClassifier, features: np.ndarray) -> Iterator[np.ndarray]:
    """The decision values after each boosting iteration, the first iteration's first."""
    for values in model.staged_decision_function(features):
        yield np.asarray(values, dtype=float).ravel()


def scores_after(model: HistGradientBoostingClassifier, features: np.ndarray, iterations: int) -> np.ndarray:
    """The decision values of the model's first `iterations` boosting iterations."""
    return next(islice(staged_scores(model, features), iterations - 1, None))


def chosen_iterations(model, val_x: np.ndarray, val_y: np.ndarray) -> tuple[int, dict]:
    """The iteration count with the best validation ROC-AUC (the fewest on ties), or FALLBACK_ITER."""
    if val_y.size == 0 or val_y.min() == val_y.max():
        reason = "no windows" if val_y.size == 0 else "one class"
        iterations = min(FALLBACK_ITER, model.n_iter_)
        return iterations, {"iteration_choice": f"fixed {iterations}: the validation split has {reason}"}
    aucs = [roc_auc(val_y, values) for values in staged_scores(model, val_x)]
    best = int(np.argmax([-np.inf if auc is None else auc for auc in aucs]))  # the first: the fewest
    return best + 1, {"iteration_choice": "validation roc_auc", "val_roc_auc": aucs[best]}


def score_profile_tree_scores(
    train: pl.DataFrame, val: pl.DataFrame, test: pl.DataFrame, flank: int, full_length: int, seed: int
) -> tuple[np.ndarray, dict]:
    """Fitted on train, iterations chosen on val, the test windows' decision values (log-odds)."""
    check_profiles(train, val, test)
    train_y = train["label"].to_numpy().astype(np.int64)
    if train_y.size == 0 or train_y.min() == train_y.max():
        raise BaselineUnavailable("the train split has no windows or one class")
    model = fit_trees(profile_features(train, flank, full_length), train_y, seed)
    val_x = profile_features(val, flank, full_length)
    iterations, choice = chosen_iterations(model, val_x, val["label"].to_numpy().astype(np.int64))
    test_scores = scores_after(model, profile_features(test, flank, full_length), iterations)
    return test_scores, {
        "profile_flank": flank,
        "features": len(feature_names(flank)),
        "scores": "raw probabilities (monotone transforms do not change a tree)",
        "iterations": iterations,
        "max_iter": MAX_ITER,
        "learning_rate": LEARNING_RATE,
        "random_state": seed,
        **choice,
    }
