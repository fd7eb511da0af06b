"""The site-level k-mer baseline (predictor `kmer`): what the genome sequence around a candidate
tells without the base model's scores.

Features: each candidate's window of window.flank nt each side (sites/candidate_windows.py: cut
as extract cuts a call's, minus strand reverse-complemented), as the frequencies of every
1..evaluate.kmer_max_k-mer (evaluation/baselines.kmer_frequencies: counts over the window
length), plus is-donor. Model: the windows-level k-mer baseline's (evaluation/baselines.py): a
logistic regression, class_weight balanced, on the features scaled by their training standard
deviation, its strength C picked from C_GRID on a validation fold's ROC-AUC.

Out of fold over site_calls' folds, as the tree: for test fold f, C is picked fitting on the
training folds but one (the fold after f) and validating on that one; the threshold per type is
F1-best on the training folds' items scored by inner fits at that C that saw neither f nor the
item's own fold (nested cross-fitting, predictors.py); the model that scores fold f is fitted at
that C on all training folds.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
from scipy import sparse
from sklearn.preprocessing import StandardScaler

from workflow_scripts.config.types import EvaluateSection, WindowSection
from workflow_scripts.data.genome import Genome
from workflow_scripts.evaluation.baselines import (
    FALLBACK_C,
    fit_logistic,
    fit_with_chosen_c,
    kmer_frequencies,
)
from workflow_scripts.sites.candidate_windows import candidate_windows
from workflow_scripts.sites.candidates import Candidates
from workflow_scripts.sites.items import Items
from workflow_scripts.sites.predictors import KMER, OutOfFold, Thresholds, per_candidate, thresholds_by_type


@dataclass(frozen=True)
class KmerFold:
    """One test fold's k-mer predictions: P(true site) of its candidates, the thresholds, C."""

    test_probability: np.ndarray
    thresholds: dict[str, float]
    c: float


def kmer_features(found: Candidates, genome: Genome, flank: int, max_k: int) -> sparse.csr_matrix:
    """(candidates, 4 + ... + 4**max_k + 1): k-mer frequencies of each window (`flank` nt each
    side of the candidate), then is-donor."""
    windows = candidate_windows(found.table, genome, flank)
    is_donor = (found.table["splice_type"] == "donor").to_numpy().astype(float)
    frequencies = kmer_frequencies(windows, max_k)
    return sparse.csr_matrix(sparse.hstack([frequencies, sparse.csr_matrix(is_donor[:, None])]))


def one_class(labels: np.ndarray) -> bool:
    return labels.size == 0 or labels.min() == labels.max()


def constant_probability(labels: np.ndarray, n: int) -> np.ndarray:
    """One class to learn from: its share is the best guess (as predictors.fit_and_predict)."""
    return np.full(n, float(labels.mean()) if labels.size else 0.0)


def fit_and_predict(
    features: sparse.csr_matrix, labels: np.ndarray, train: np.ndarray, test: np.ndarray, c: float
) -> np.ndarray:
    """P(true site) of the `test` candidates from a fit at strength `c` on the `train` ones."""
    if not test.any() or one_class(labels[train]):
        return constant_probability(labels[train], int(test.sum()))
    scaler = StandardScaler(with_mean=False).fit(features[train])
    model = fit_logistic(scaler.transform(features[train]), labels[train], c)
    return model.predict_proba(scaler.transform(features[test]))[:, 1]


def chosen_c(
    features: sparse.csr_matrix, labels: np.ndarray, train: np.ndarray, val: np.ndarray
) -> tuple[float, np.ndarray]:
    """C of the fit on `train` with the best ROC-AUC on `val` (baselines.fit_with_chosen_c), and
    that fit's P(true site) of the `val` candidates."""
    if one_class(labels[train]) or not val.any():
        return FALLBACK_C, constant_probability(labels[train], int(val.sum()))
    scaler = StandardScaler(with_mean=False).fit(features[train])
    train_x, val_x = scaler.transform(features[train]), scaler.transform(features[val])
    model, details = fit_with_chosen_c(train_x, labels[train], val_x, labels[val])
    return float(details["C"]), model.predict_proba(val_x)[:, 1]


def validation_fold(test_fold: int, folds: list[int]) -> int:
    """The training fold that picks C for `test_fold`: the next one, round the folds."""
    return folds[(folds.index(test_fold) + 1) % len(folds)]


def predict_fold(
    features: sparse.csr_matrix, labels: np.ndarray, items: Items, fold: np.ndarray, test_fold: int
) -> KmerFold:
    """C from the validation fold, thresholds from inner fits, then the test fold's predictions."""
    folds = sorted(set(fold.tolist()) | set(items.fold.tolist()))
    val_fold = validation_fold(test_fold, folds)
    inner = np.full(len(fold), np.nan)
    c, val_probability = chosen_c(
        features, labels, (fold != test_fold) & (fold != val_fold), fold == val_fold
    )
    inner[fold == val_fold] = val_probability
    for other in folds:
        if other not in (test_fold, val_fold):
            train = (fold != test_fold) & (fold != other)
            inner[fold == other] = fit_and_predict(features, labels, train, fold == other, c)
    thresholds = thresholds_by_type(items, items.scores(inner), items.fold != test_fold)
    test = fit_and_predict(features, labels, fold != test_fold, fold == test_fold, c)
    return KmerFold(test, thresholds, c)


def with_kmer(
    predictions: OutOfFold,
    found: Candidates,
    items: Items,
    features: sparse.csr_matrix,
    progress: Callable[[str], None] = lambda line: None,
) -> tuple[OutOfFold, dict[int, float]]:
    """`predictions` with the kmer predictor's probability, thresholds and calls; C by fold."""
    fold, types = found.table["fold"].to_numpy(), found.table["splice_type"].to_numpy()
    labels = found.table["is_true_site"].to_numpy()
    probability = np.full(len(fold), np.nan)
    thresholds: Thresholds = {}
    chosen: dict[int, float] = {}
    for test_fold in sorted(set(fold.tolist()) | set(items.fold.tolist())):
        began = time.perf_counter()
        result = predict_fold(features, labels, items, fold, test_fold)
        probability[fold == test_fold] = result.test_probability
        thresholds[test_fold], chosen[test_fold] = result.thresholds, result.c
        progress(f"kmer fold {test_fold}: C {result.c:g}, in {time.perf_counter() - began:.1f} s")
    merged = replace(
        predictions,
        thresholds={**predictions.thresholds, KMER: thresholds},
        calls={**predictions.calls, KMER: probability >= per_candidate(thresholds, fold, types)},
        kmer_probability=probability,
    )
    return merged, chosen


def kmer_baseline(
    predictions: OutOfFold,
    found: Candidates,
    items: Items,
    genome: Genome,
    window: WindowSection,
    evaluate: EvaluateSection,
    progress: Callable[[str], None] = lambda line: None,
) -> tuple[OutOfFold, dict]:
    """`predictions` with the kmer predictor, and what site_metrics.json says of it: the windows
    are window.flank nt each side of the candidate, the k-mers 1..evaluate.kmer_max_k nt."""
    flank, max_k = window.flank, evaluate.kmer_max_k
    features = kmer_features(found, genome, flank, max_k)
    merged, chosen = with_kmer(predictions, found, items, features, progress)
    facts = {
        "flank": flank,
        "window_nt": 2 * flank + 1,
        "max_k": max_k,
        "features": int(features.shape[1]),
        "model": "logistic regression, class_weight balanced, C on a validation fold's ROC-AUC",
        "C": {str(fold): c for fold, c in chosen.items()},
    }
    return merged, facts
