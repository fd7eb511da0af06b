"""site_metrics.json: settings, counts, thresholds per fold, site-level metrics of every predictor,
the bootstrap intervals of their differences, and the answer in a sentence.

    settings      calling.threshold and consensus_window, the sites: section
    counts        candidates (true ones), annotated sites (missed: no candidate), genes, clusters
    thresholds    {base_tuned | tree | kmer: {fold: {donor, acceptor}}} (null: no site to tune on)
    calls         {base_threshold | base_tuned | tree | kmer: {overall | donor | acceptor:
                   precision, recall, f1, tp, fp, fn}}
    scores        {base_score | tree_probability | kmer_probability: {group: pr_auc,
                   top_k_accuracy, k}}
    differences   {"tree - base_tuned" | "base_tuned - base_threshold" | "tree - kmer" |
                   "kmer - base_tuned": {group: {f1 | precision | recall: estimate, low, high,
                   reason, verdict}}}
    kmer          the k-mer baseline's window (flank), max_k, features and C per fold (sites/kmer.py)
    (sites.model: the predictor errorseq in thresholds and calls, errorseq_probability in scores,
    "errorseq - tree", "errorseq - base_tuned" and "errorseq - kmer" in differences:
    sites/errorseq.py)
    bootstrap     confidence, replicates, seed, resampled_unit, clusters
    (calls, scores, differences and bootstrap count the items inside annotated genes on their
    strand: the in-gene figures)
    whole_region  scored (regions | gene spans), calls of every item, false_positives_by_location
                  {predictor: {gene, antisense, intergenic}}, differences with 100-kb block
                  bootstrap intervals, bootstrap (sites/whole_region.py)
    diagnostics   {fp_vs_tp: the base model's calls, FP vs TP, ranked by each predictor's
                   probability: ROC-AUC and PR-AUC with intervals (sites/diagnostics.py)}
    (sites.transfer: transfer_base_tuned and transfer_tree in thresholds and calls,
    transfer_probability in scores (with the source's deep models transfer_errorseq and
    transfer_errorseq_probability), their pairs in differences, and `transfer`: the rescorer file,
    its source genome and thresholds: sites/rescorer.py)
    recommended   the predictor whose calls to use here, and why (sites/recommend.py)
    answer        the sentence the log ends with, and the recommendation
"""

from __future__ import annotations

import math

import numpy as np

from workflow_scripts.calling.contract import GENE_CLUSTER
from workflow_scripts.calling.scores import SPLICE_TYPES
from workflow_scripts.sites.answer import answer
from workflow_scripts.sites.candidates import NO_GENE, Candidates
from workflow_scripts.sites.diagnostics import fp_vs_tp
from workflow_scripts.sites.intervals import bootstrap_facts, difference_intervals
from workflow_scripts.sites.items import Items
from workflow_scripts.sites.predictors import OutOfFold
from workflow_scripts.sites.recommend import recommend, recommendation_sentence
from workflow_scripts.sites.settings import SiteSettings
from workflow_scripts.sites.site_metrics import metric_report
from workflow_scripts.sites.whole_region import (
    BLOCK_UNIT,
    LOCATIONS,
    SCORED_GENES,
    SCORED_REGIONS,
    whole_region_report,
)


def by_type(values: np.ndarray, types: np.ndarray) -> dict[str, int]:
    return {t: int(values[types == t].sum()) for t in SPLICE_TYPES}


def count_facts(found: Candidates, unscored_sites: int) -> dict:
    table, sites = found.table, found.sites
    candidate_types, site_types = table["splice_type"].to_numpy(), sites["splice_type"].to_numpy()
    genes = (set(table["gene_id"].to_list()) | set(sites["gene_id"].to_list())) - {NO_GENE}
    clusters = set(table[GENE_CLUSTER].to_list()) | set(sites[GENE_CLUSTER].to_list())
    return {
        "candidates": by_type(np.ones(table.height, bool), candidate_types),
        "true_candidates": by_type(table["is_true_site"].to_numpy(), candidate_types),
        "sites": sites.height,
        "sites_by_type": by_type(np.ones(sites.height, bool), site_types),
        "missed_sites": by_type(found.missed, site_types),
        "unscored_sites": unscored_sites,
        "genes": len(genes),
        "gene_clusters": len({unit for unit in clusters if not unit.startswith(BLOCK_UNIT)}),
        **location_counts(table),
    }


def location_counts(table) -> dict:
    """Candidates by location (gene, antisense, intergenic) where the table has them."""
    if "location" not in table.columns:
        return {}
    where = table["location"].to_numpy()
    return {"candidates_by_location": {name: int((where == name).sum()) for name in LOCATIONS}}


def json_thresholds(predictions: OutOfFold) -> dict:
    def finite(value: float) -> float | None:
        return float(value) if math.isfinite(value) else None

    return {
        name: {str(fold): {t: finite(v) for t, v in by_type.items()} for fold, by_type in folds.items()}
        for name, folds in predictions.thresholds.items()
    }


def site_report(
    found: Candidates,
    items: Items,
    predictions: OutOfFold,
    settings: SiteSettings,
    unscored_sites: int,
    transfer: dict | None = None,
    kmer: dict | None = None,
    scored_regions: bool = False,
) -> dict:
    """`scored_regions`: the scores cover whole regions (calling.regions with start annotation),
    not only the genes' spans (sites/whole_region.py)."""
    in_genes = items.in_genes()
    replicates, seed = settings.bootstrap_replicates, settings.seed
    scored = SCORED_REGIONS if scored_regions else SCORED_GENES
    report = {
        "settings": settings.summary(),
        "counts": count_facts(found, unscored_sites),
        "thresholds": json_thresholds(predictions),
        **metric_report(found, in_genes, predictions),
        "differences": difference_intervals(in_genes, predictions.calls, replicates, seed),
        "bootstrap": bootstrap_facts(replicates, seed, in_genes),
        "whole_region": whole_region_report(items, predictions.calls, replicates, seed, scored),
        "diagnostics": {
            "fp_vs_tp": fp_vs_tp(
                found, predictions, settings.threshold, settings.bootstrap_replicates, settings.seed
            )
        },
    }
    if kmer is not None:
        report["kmer"] = kmer
    if transfer is not None:
        report["transfer"] = transfer
    report["recommended"] = recommend(report)
    report["answer"] = answer(report) + recommendation_sentence(report["recommended"])
    return report
