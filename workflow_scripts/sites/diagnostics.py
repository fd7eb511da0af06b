"""FP vs TP among the base model's own calls, as a diagnostic beside the site-level F1.

Of the candidates the base model calls (score >= calling.threshold), which are its errors (FP, no
annotated site within ±w) and which are right (TP)? Each predictor's out-of-fold P(true site)
ranks them (error score = 1 - P), against the base score itself; ROC-AUC and PR-AUC with 95%
gene-cluster bootstrap intervals and paired differences (evaluation/bootstrap.compare_predictors,
the evaluate rule's comparison). The tree sees the splice type and the base score does not: the
F1 of `base_tuned` (a threshold per type) is the fair comparison; this one says how well each
predictor orders the base model's calls, the error models' own question.
"""

from __future__ import annotations

import numpy as np

from workflow_scripts.calling.contract import GENE_CLUSTER
from workflow_scripts.evaluation.bootstrap import compare_predictors
from workflow_scripts.sites.candidates import Candidates
from workflow_scripts.sites.predictors import OutOfFold
from workflow_scripts.sites.site_metrics import (
    BASE_SCORE,
    ERRORSEQ_PROBABILITY,
    KMER_PROBABILITY,
    TRANSFER_PROBABILITY,
    TREE_PROBABILITY,
)

REFERENCE = TREE_PROBABILITY


def fp_vs_tp(
    found: Candidates, predictions: OutOfFold, threshold: float, n_replicates: int, seed: int
) -> dict | None:
    """compare_predictors over the base model's called candidates (label 1 = FP); None without
    both an FP and a TP."""
    base = found.table["base_score"].to_numpy().astype(float)
    called = base >= threshold
    is_error = ~found.table["is_true_site"].to_numpy()[called]
    if is_error.all() or not is_error.any():
        return None
    probabilities = {
        BASE_SCORE: base,
        TREE_PROBABILITY: predictions.tree_probability,
        KMER_PROBABILITY: predictions.kmer_probability,
        ERRORSEQ_PROBABILITY: predictions.errorseq_probability,
        TRANSFER_PROBABILITY: predictions.transfer_probability,
    }
    error_scores = {
        name: 1 - np.nan_to_num(values[called], nan=0.0)
        for name, values in probabilities.items()
        if values is not None
    }
    clusters = found.table[GENE_CLUSTER].to_numpy()[called]
    comparison = compare_predictors(is_error, error_scores, clusters, REFERENCE, n_replicates, seed)
    return {"threshold": threshold, "reference": REFERENCE, **comparison}


def fp_vs_tp_line(diagnostic: dict | None) -> str:
    if diagnostic is None:
        return "FP vs TP: the base model's calls are all TP or all FP"

    def shown(name: str) -> str:
        roc = diagnostic["predictors"][name]["roc_auc"]
        if roc["low"] is None:
            return f"{name} {roc['estimate']:.3f}"
        return f"{name} {roc['estimate']:.3f} [{roc['low']:.3f}, {roc['high']:.3f}]"

    names = ", ".join(shown(name) for name in diagnostic["predictors"])
    return (
        f"FP vs TP among the base model's {diagnostic['n']:,} calls at {diagnostic['threshold']} "
        f"({diagnostic['n_positive']:,} FP), ROC-AUC out of fold: {names}"
    )
