"""sites.model: errorseq's deep model as the site_calls predictor `errorseq`, out of fold.

The run of fold i (site_candidates_fold<i>: train and evaluate on sites/candidate_windows.py's
windows) gives P(true site) of fold i's candidates (evaluate's predictions.parquet: its test
split) and of its val split's candidates (the other folds' val clusters, predicted here with
evaluate's own model loading and batching). Fold i's threshold per splice type is the
site-level-F1-best one (predictors.f1_best_threshold, make_calls' counting) on the items of those
val clusters, scored by that model: clusters the model did not fit on, and never fold i's, so the
test fold takes no part in its own threshold.

The runs must test exactly site_calls' folds: every candidate of fold i is in run i's test split
and no other candidate is; a run that differs (other settings, other inputs) is refused.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import polars as pl

from workflow_scripts.calling.contract import GENE_CLUSTER
from workflow_scripts.errors import InputError
from workflow_scripts.layout import FoldRunFiles
from workflow_scripts.sites.candidate_windows import candidate_ids
from workflow_scripts.sites.candidates import Candidates
from workflow_scripts.sites.items import Items
from workflow_scripts.sites.predictors import (
    ERRORSEQ,
    OutOfFold,
    Thresholds,
    per_candidate,
    thresholds_by_type,
)


@dataclass(frozen=True)
class FoldPredictions:
    """One run's P(true site): its test candidates and its val candidates, by window id."""

    source: str  # the run's directory, for errors
    fold: int
    test_ids: np.ndarray
    test_probability: np.ndarray
    val_ids: np.ndarray
    val_probability: np.ndarray
    val_clusters: frozenset[str]
    val_folds: frozenset[int]


def on_candidates(ids: np.ndarray, wanted: np.ndarray, values: np.ndarray) -> np.ndarray:
    """`values` (by `wanted` id) placed on the candidates `ids`; NaN elsewhere."""
    result = np.full(len(ids), np.nan)
    position = {key: index for index, key in enumerate(ids.tolist())}
    rows = np.array([position.get(key, -1) for key in wanted.tolist()], dtype=np.int64)
    result[rows[rows >= 0]] = np.asarray(values, dtype=float)[rows >= 0]
    return result


def check_run(run: FoldPredictions, ids: np.ndarray, fold: np.ndarray) -> None:
    mine = set(ids[fold == run.fold].tolist())
    tested = set(run.test_ids.tolist())
    if mine != tested:
        extra, lacking = len(tested - mine), len(mine - tested)
        raise InputError(
            run.source,
            "split test",
            f"tests other candidates than site_calls' fold {run.fold} ({lacking} of its {len(mine)} "
            f"candidates missing, {extra} others): the runs were made from other inputs or sites settings; "
            "rerun site_windows",
        )
    if run.fold in run.val_folds:
        raise InputError(run.source, "split val", f"holds candidates of the test fold {run.fold}")


def errorseq_out_of_fold(
    found: Candidates, items: Items, runs: list[FoldPredictions]
) -> tuple[np.ndarray, Thresholds]:
    """P(true site) of every candidate from its fold's run, and each fold's threshold per type."""
    ids = candidate_ids(found.table).to_numpy()
    fold = found.table["fold"].to_numpy()
    folds = sorted(set(fold.tolist()) | set(items.fold.tolist()))
    if sorted(run.fold for run in runs) != folds:
        raise InputError(
            "--errorseq", "folds", f"runs of folds {sorted(r.fold for r in runs)}, site_calls has {folds}"
        )
    probability = np.full(len(ids), np.nan)
    thresholds: Thresholds = {}
    for run in runs:
        check_run(run, ids, fold)
        probability[fold == run.fold] = on_candidates(ids, run.test_ids, run.test_probability)[
            fold == run.fold
        ]
        val = on_candidates(ids, run.val_ids, run.val_probability)
        val[fold == run.fold] = np.nan
        tuning = np.isin(items.cluster, list(run.val_clusters)) & (items.fold != run.fold)
        thresholds[run.fold] = thresholds_by_type(items, items.scores(val), tuning)
    return probability, thresholds


def with_errorseq(
    predictions: OutOfFold, found: Candidates, items: Items, runs: list[FoldPredictions]
) -> OutOfFold:
    """`predictions` with the errorseq predictor's probability, thresholds and calls."""
    probability, thresholds = errorseq_out_of_fold(found, items, runs)
    fold, types = found.table["fold"].to_numpy(), found.table["splice_type"].to_numpy()
    called = probability >= per_candidate(thresholds, fold, types)  # NaN: never called
    return replace(
        predictions,
        thresholds={**predictions.thresholds, ERRORSEQ: thresholds},
        calls={**predictions.calls, ERRORSEQ: called},
        errorseq_probability=probability,
    )


def read_fold_predictions(run: FoldRunFiles, batch_size: int) -> FoldPredictions:
    """One run's test predictions (evaluate's predictions.parquet) and its val split, predicted
    with evaluate's model loading and batching."""
    from workflow_scripts.evaluation.predict import load_trained_model, predict_split

    windows = pl.read_parquet(run.windows, columns=["id", "split", "fold", GENE_CLUSTER])
    test_folds = windows.filter(pl.col("split") == "test")["fold"].unique().to_list()
    if len(test_folds) != 1:
        raise InputError(run.windows, "fold", f"the test split holds folds {sorted(test_folds)}, not one")
    tested = pl.read_parquet(run.predictions, columns=["id", "prob"])
    model, saved = load_trained_model(run.weights, run.model_config)
    data, val_probability = predict_split(model, saved, run.windows, run.manifest, "val", batch_size)
    val = windows.filter(pl.col("split") == "val")
    return FoldPredictions(
        source=run.run,
        fold=int(test_folds[0]),
        test_ids=tested["id"].to_numpy(),
        test_probability=tested["prob"].to_numpy(),
        val_ids=np.asarray(data.ids),
        val_probability=val_probability,
        val_clusters=frozenset(val[GENE_CLUSTER].to_list()),
        val_folds=frozenset(val["fold"].to_list()),
    )
