"""sites.model's fold models on another genome, each target gene scored by models that never saw
its orthologs (cross-species transfer held out, benchmarks/site_transfer/held_out.py for the tree).

Run site_candidates_fold<f> trained on the other folds' train split and chose its epoch on their
val split: fold model f never saw source fold f. So:
* a target gene with no ortholog is scored as sites.transfer scores every gene: the mean of the k
  fold models, at the thresholds of their out-of-fold probabilities over all source items (the
  shipped thresholds, rescorer.fit_rescorer);
* a target gene whose orthologs all lie in source fold f is scored by model f alone, at fold f's
  own out-of-fold thresholds (site_metrics.json `thresholds.errorseq[f]`: F1-best on that run's
  val clusters, which lie outside fold f);
* a target gene whose orthologs lie in several folds cannot be held out: every model saw one of
  them, and none left out two folds. Such genes are counted and reported apart: their candidates
  keep the shipped score, and the held-out comparison leaves their items out
  (benchmarks/site_transfer/ortholog_transfer.py).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import polars as pl

from benchmarks.site_transfer.held_out import Folds
from workflow_scripts.errors import InputError
from workflow_scripts.layout import FoldRunFiles
from workflow_scripts.sites.candidates import Candidates
from workflow_scripts.sites.inputs import SiteInputs, profiled_windows

MEAN = None  # a candidate scored by the mean of every fold model


def tested_fold(run: FoldRunFiles) -> int:
    """The source fold a sites.model run tested (its windows.parquet's test split)."""
    path = Path(run.windows)
    if not path.is_file():
        raise InputError(path, "windows", "not found: a sites.model run (site_candidates_fold<i>) needs it")
    tested = pl.read_parquet(path, columns=["split", "fold"]).filter(pl.col("split") == "test")
    folds = tested["fold"].unique().to_list()
    if len(folds) != 1:
        raise InputError(path, "fold", f"the test split holds folds {sorted(folds)}, not one")
    return int(folds[0])


def model_flank(run: FoldRunFiles) -> int:
    path = Path(run.model_config)
    if not path.is_file():
        raise InputError(path, "model", "not found: has the sites.model run finished?")
    return int(json.loads(path.read_text())["window"]["flank"])


def fold_model_probabilities(
    runs: list[FoldRunFiles],
    found: Candidates,
    inputs: SiteInputs,
    batch_size: int,
    progress=lambda line: None,
) -> dict[int, np.ndarray]:
    """Source fold -> the P(true site) its run's model gives every candidate of `found` (another
    genome's), the windows cut as site_windows cuts them (the models' flank, the base model's
    score profiles), scored with predict's own model loading and batching."""
    from workflow_scripts.inference.predict_calls import TrainedModel

    flanks = {model_flank(run) for run in runs}
    if len(flanks) != 1:
        raise InputError(runs[0].run, "window.flank", f"the fold runs' models differ: {sorted(flanks)}")
    windows, _ = profiled_windows(found, inputs, flanks.pop())
    sequences, lengths = windows["sequence"].to_list(), windows["length"].to_numpy()
    probabilities = {}
    for run in runs:
        began, fold = time.perf_counter(), tested_fold(run)
        model = TrainedModel.from_files(run.weights, run.model_config, batch_size)
        features, profiles = model.features(windows, run.run), model.profiles(windows, run.run)
        probabilities[fold] = np.asarray(model.p_error(sequences, lengths, features, profiles), dtype=float)
        progress(
            f"fold model {fold} ({run.run}): {len(sequences):,} candidates in {time.perf_counter() - began:.1f} s"
        )
    return probabilities


def held_out_model(excluded: Folds) -> int | None:
    """The fold model that never saw folds `excluded`: MEAN (every model) for none, f for {f};
    several folds have none (ValueError)."""
    if len(excluded) > 1:
        raise ValueError(f"no fold model left out folds {sorted(excluded)}")
    return next(iter(excluded)) if excluded else MEAN


def deep_scheme(
    fold_probability: dict[int, np.ndarray],
    fold_thresholds: dict[int, dict[str, float]],
    shipped_thresholds: dict[str, float],
    types: np.ndarray,
    chosen: list[int | None],
) -> tuple[np.ndarray, np.ndarray]:
    """(probability, calls) of each target candidate from its `chosen` fold model at that fold's
    thresholds, or (MEAN) the mean of every fold model at the shipped thresholds."""
    mean = np.mean([fold_probability[f] for f in sorted(fold_probability)], axis=0)
    probability, cut = mean.copy(), np.full(len(types), np.inf)
    for row, model in enumerate(chosen):
        thresholds = shipped_thresholds if model is MEAN else fold_thresholds[model]
        cut[row] = thresholds[str(types[row])]
        if model is not MEAN:
            probability[row] = fold_probability[model][row]
    return probability, probability >= cut
