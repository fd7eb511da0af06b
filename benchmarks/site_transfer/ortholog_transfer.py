"""Cross-species transfer scored two ways: as shipped, and ortholog-held-out (issue 36).

sites.transfer applies the source genome's tree (fitted on all its candidates), thresholds and,
with sites.model, the mean of its fold models to every target candidate. Where the target genes
are orthologs of source genes, that measures in part how well the source predictors remember
near-copies of their training genes. Here each target gene is also scored only by source
predictors that never saw its orthologs (benchmarks/site_transfer/orthologs.py finds them; benchmarks/site_transfer/held_out.py and
benchmarks/site_transfer/held_out_deep.py leave out the source folds they lie in), and both figures are reported on
the same target items with 1,000-replicate gene-cluster bootstrap intervals (sites/intervals.py).

Predictors (calls per target candidate):
    transfer_base_tuned, transfer_tree, transfer_errorseq   as shipped (sites.transfer's)
    held_out_base_tuned, held_out_tree, held_out_errorseq   without the folds of the gene's orthologs
    control_base_tuned, control_tree, control_errorseq      without as many other folds: as much
                                                            training data, orthologs seen
Comparisons, each on the target items of the genes it can score (a gene's items: its scored
sites and its false candidates):
    shipped     every item: the transferred predictors as site_calls reports them
    tree        genes whose orthologs leave at least two source folds to fit on (held_out.py)
    tree_orthologous   those of them with an ortholog in a source fold (where the two differ)
    tree_control   those with an equal-size control (orthologs in at most half the folds)
    deep        genes whose orthologs lie in at most one fold (held_out_deep.py: the others are
                counted apart, no fold model left two folds out); deep_orthologous likewise
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from benchmarks.site_transfer.held_out import (
    NOTHING,
    Folds,
    SourceFits,
    can_hold_out,
    equal_size_control,
    excluded_folds,
    scheme_calls,
    source_gene_folds,
)
from benchmarks.site_transfer.held_out_deep import MEAN, deep_scheme, held_out_model
from benchmarks.site_transfer.orthologs import orthologs, share_counts
from benchmarks.site_transfer.run_folder import SiteRun, column_or_none
from workflow_scripts import layout
from workflow_scripts.errors import InputError
from workflow_scripts.sites.candidates import Candidates
from workflow_scripts.sites.intervals import pair_differences
from workflow_scripts.sites.items import Items
from workflow_scripts.sites.predictors import (
    ERRORSEQ,
    TRANSFER_BASE_TUNED,
    TRANSFER_ERRORSEQ,
    TRANSFER_TREE,
    TREE,
    thresholds_by_type,
)
from workflow_scripts.sites.site_metrics import predictor_calls

HELD_OUT_BASE_TUNED, HELD_OUT_TREE, HELD_OUT_ERRORSEQ = (
    "held_out_base_tuned",
    "held_out_tree",
    "held_out_errorseq",
)
CONTROL_BASE_TUNED, CONTROL_TREE, CONTROL_ERRORSEQ = "control_base_tuned", "control_tree", "control_errorseq"
TREE_PAIRS = (
    (TRANSFER_TREE, TRANSFER_BASE_TUNED),
    (HELD_OUT_TREE, HELD_OUT_BASE_TUNED),
    (HELD_OUT_TREE, TRANSFER_TREE),
    (HELD_OUT_BASE_TUNED, TRANSFER_BASE_TUNED),
)
CONTROL_PAIRS = (
    (CONTROL_TREE, CONTROL_BASE_TUNED),
    (HELD_OUT_TREE, CONTROL_TREE),
    (CONTROL_TREE, TRANSFER_TREE),
)
DEEP_PAIRS = (
    (TRANSFER_ERRORSEQ, TRANSFER_BASE_TUNED),
    (HELD_OUT_ERRORSEQ, HELD_OUT_BASE_TUNED),
    (HELD_OUT_ERRORSEQ, TRANSFER_ERRORSEQ),
    (HELD_OUT_ERRORSEQ, CONTROL_ERRORSEQ),
)
SHIPPED_PAIRS = ((TRANSFER_TREE, TRANSFER_BASE_TUNED), (TRANSFER_ERRORSEQ, TRANSFER_BASE_TUNED))


def item_genes(found: Candidates) -> np.ndarray:
    """Each item's gene, in Items.from_candidates' order (the scored sites, then the false candidates)."""
    false_rows = ~found.table["is_true_site"].to_numpy()
    return np.concatenate([found.sites["gene_id"].to_numpy(), found.table["gene_id"].to_numpy()[false_rows]])


def items_subset(items: Items, mask: np.ndarray) -> Items:
    return Items(
        items.members[mask],
        items.is_site[mask],
        items.splice_type[mask],
        items.fold[mask],
        items.cluster[mask],
    )


def comparison(
    items: Items, genes: np.ndarray, mask: np.ndarray, calls: dict, pairs, replicates: int, seed: int
) -> dict:
    """The predictors of `pairs` on the items in `mask`: their calls and paired differences."""
    chosen = items_subset(items, mask)
    names = sorted({name for pair in pairs for name in pair})
    if not mask.any():
        return {"genes": 0, "gene_clusters": 0, "sites": 0, "items": 0, "calls": {}, "differences": {}}
    return {
        "genes": len(set(genes[mask].tolist())),
        "gene_clusters": len(set(chosen.cluster.tolist())),
        "sites": int(chosen.is_site.sum()),
        "items": int(mask.sum()),
        "calls": {name: predictor_calls(chosen, calls[name]) for name in names},
        "differences": pair_differences(chosen, calls, pairs, replicates, seed),
    }


@dataclass(frozen=True)
class Exclusions:
    """What each target candidate and item may be scored by."""

    held_out: list[Folds]  # per candidate: the source folds of its gene's orthologs
    genes: np.ndarray  # per item: its gene
    item_folds: list[Folds]  # per item: its gene's


def exclusions(target: Candidates, excluded: dict[str, Folds]) -> Exclusions:
    genes = item_genes(target)
    return Exclusions(
        held_out=[excluded.get(g, NOTHING) for g in target.table["gene_id"].to_list()],
        genes=genes,
        item_folds=[excluded.get(g, NOTHING) for g in genes.tolist()],
    )


def tree_schemes(fits: SourceFits, target: Candidates, chosen: Exclusions, progress) -> dict[str, np.ndarray]:
    """Calls of the shipped, held-out and control trees and thresholds on every target candidate
    (a candidate that cannot be held out, or has no control, keeps the shipped ones)."""
    held: list[Folds | None] = [s if can_hold_out(s, fits.folds) else None for s in chosen.held_out]
    control = [equal_size_control(s, fits.folds) if s is not None else None for s in held]
    shipped: list[Folds | None] = [None] * len(held)
    schemes = {
        name: scheme_calls(fits, target, picked, progress)
        for name, picked in (("shipped", shipped), ("held_out", held), ("control", control))
    }
    return {
        TRANSFER_BASE_TUNED: schemes["shipped"].base_calls,
        TRANSFER_TREE: schemes["shipped"].tree_calls,
        HELD_OUT_BASE_TUNED: schemes["held_out"].base_calls,
        HELD_OUT_TREE: schemes["held_out"].tree_calls,
        CONTROL_BASE_TUNED: schemes["control"].base_calls,
        CONTROL_TREE: schemes["control"].tree_calls,
        "transfer_probability": schemes["shipped"].probability,
        "held_out_probability": schemes["held_out"].probability,
    }


def json_thresholds(saved: dict) -> dict[str, float]:
    return {t: float("inf") if v is None else float(v) for t, v in saved.items()}


def control_model(model: int, folds: list[int]) -> int:
    """Another fold model than `model` (the next fold): as much training data, orthologs seen."""
    return folds[(folds.index(model) + 1) % len(folds)]


def deep_schemes(
    source: SiteRun, fold_probability: dict[int, np.ndarray], target: Candidates, chosen: Exclusions
) -> dict[str, np.ndarray]:
    """Calls of the shipped, held-out and control fold models on every target candidate."""
    oof = column_or_none(source, "errorseq_probability")
    saved = source.metrics.get("thresholds", {}).get(ERRORSEQ)
    if oof is None or saved is None:
        raise InputError(
            source.root / layout.SITES_DIR,
            ERRORSEQ,
            "no errorseq predictor: the source's site_calls ran without sites.model",
        )
    everything = np.ones(len(source.items), bool)
    shipped = thresholds_by_type(source.items, source.items.scores(oof), everything)
    by_fold = {int(f): json_thresholds(t) for f, t in saved.items()}
    folds = sorted(fold_probability)
    held = [held_out_model(s) if len(s) <= 1 else MEAN for s in chosen.held_out]
    control = [MEAN if m is MEAN else control_model(m, folds) for m in held]
    types = target.table["splice_type"].to_numpy()
    result = {}
    every_model: list[int | None] = [MEAN] * len(held)
    for name, picked in (
        (TRANSFER_ERRORSEQ, every_model),
        (HELD_OUT_ERRORSEQ, held),
        (CONTROL_ERRORSEQ, control),
    ):
        probability, result[name] = deep_scheme(fold_probability, by_fold, shipped, types, picked)
        result[f"{name}_probability"] = probability
    return result


def ortholog_summary(
    pairs: pl.DataFrame, min_share: float, target: SiteRun, gene_fold: dict, excluded: dict
) -> dict:
    """How many target genes have orthologs, and in how many source folds they lie."""
    target_genes = set(item_genes(target.found).tolist()) - {"(no gene)"}
    chosen = orthologs(pairs, min_share).filter(pl.col("target_gene").is_in(sorted(target_genes)))
    by_folds: dict[str, int] = {}
    for gene in target_genes:
        key = str(len(excluded.get(gene, NOTHING)))
        by_folds[key] = by_folds.get(key, 0) + 1
    return {
        "min_share": min_share,
        "target_genes": len(target_genes),
        "with_ortholog": chosen["target_gene"].n_unique(),
        "source_orthologs": chosen["source_gene"].n_unique(),
        "source_orthologs_without_fold": len(set(chosen["source_gene"].to_list()) - set(gene_fold)),
        "genes_by_ortholog_folds": dict(sorted(by_folds.items(), key=lambda item: int(item[0]))),
        "genes_with_ortholog_at_share": {
            str(bar): n
            for bar, n in share_counts(
                pairs.filter(pl.col("target_gene").is_in(sorted(target_genes)))
            ).items()
        },
        "median_best_share": (
            float(np.median(chosen.group_by("target_gene").agg(pl.col("share").max())["share"].to_numpy()))
            if chosen.height
            else None
        ),
    }


def reproduction_checks(fits: SourceFits, source: SiteRun, target: SiteRun, calls: dict) -> dict:
    """Numbers that say the rebuilt predictors are site_calls' own: the source's out-of-fold tree
    probabilities from the trees without one fold; the target's transferred probabilities when
    its site_calls ran sites.transfer (with any source: equal only when it is this one); and the
    shipped tree on its own training candidates (in-sample F1: what memory alone reaches)."""
    fold = source.found.table["fold"].to_numpy()
    rebuilt = np.full(len(fold), np.nan)
    for f in fits.folds:
        rows = fold == f
        rebuilt[rows] = fits.probability(frozenset({f}), rows)
    checks: dict = {
        "source_out_of_fold_tree_max_abs_difference": float(
            np.nanmax(np.abs(rebuilt - column_or_none(source, "tree_probability")))
        )
    }
    shipped = column_or_none(target, "transfer_probability")
    if shipped is not None:
        checks["target_transfer_probability_max_abs_difference"] = float(
            np.nanmax(np.abs(shipped - calls["transfer_probability"]))
        )
    fit = fits.fit(NOTHING)
    types = source.found.table["splice_type"].to_numpy()
    cut = np.array([fit.thresholds[TREE][t] for t in types])
    own = predictor_calls(source.items, fit.probability(source.found.features) >= cut)
    checks["source_in_sample_tree_f1"] = own["overall"]["f1"]
    return checks


@dataclass
class TransferCalls:
    """Every transferred predictor's calls (and probabilities) on the target candidates."""

    calls: dict[str, np.ndarray]
    chosen: Exclusions
    fits: SourceFits
    gene_fold: dict[str, int]  # source gene -> fold
    excluded: dict[str, Folds]  # target gene -> the source folds of its orthologs


def transfer_calls(
    source: SiteRun,
    target: SiteRun,
    pairs: pl.DataFrame,
    min_share: float,
    fold_probability: dict[int, np.ndarray] | None = None,
    progress: Callable[[str], None] = lambda line: None,
) -> TransferCalls:
    """The shipped, held-out and control predictors on every target candidate; `pairs`:
    orthologs.exonic_kmer_pairs of target and source; `fold_probability`: the source's fold
    models on the target (held_out_deep.py), or None."""
    gene_fold = source_gene_folds(source.found, source.inputs.clusters, source.inputs.genes)
    excluded = excluded_folds(orthologs(pairs, min_share), gene_fold)
    chosen = exclusions(target.found, excluded)
    fits = SourceFits(source.found, source.items, source.settings, progress)
    calls = tree_schemes(fits, target.found, chosen, progress)
    if fold_probability is not None:
        calls.update(deep_schemes(source, fold_probability, target.found, chosen))
    return TransferCalls(calls, chosen, fits, gene_fold, excluded)


def ortholog_transfer(
    source: SiteRun,
    target: SiteRun,
    pairs: pl.DataFrame,
    min_share: float,
    replicates: int,
    fold_probability: dict[int, np.ndarray] | None = None,
    progress: Callable[[str], None] = lambda line: None,
) -> dict:
    """The report (module docstring): transfer_calls compared on the target's items."""
    moved = transfer_calls(source, target, pairs, min_share, fold_probability, progress)
    calls, chosen, fits = moved.calls, moved.chosen, moved.fits
    seed = target.settings.seed
    holdable = np.array([can_hold_out(s, fits.folds) for s in chosen.item_folds])
    controlled = holdable & np.array(
        [equal_size_control(s, fits.folds) is not None for s in chosen.item_folds]
    )
    report: dict[str, Any] = {
        "source": str(source.root),
        "target": str(target.root),
        "orthologs": ortholog_summary(pairs, min_share, target, moved.gene_fold, moved.excluded),
        "source_folds": fits.folds,
        "fits": sorted([sorted(s) for s in fits.trees], key=lambda s: (len(s), s)),
        "bootstrap": {"replicates": replicates, "seed": seed, "resampled_unit": "gene_cluster"},
        "checks": reproduction_checks(fits, source, target, calls),
    }
    shipped_pairs = SHIPPED_PAIRS if fold_probability is not None else SHIPPED_PAIRS[:1]
    items, genes = target.items, chosen.genes
    everything = np.ones(len(items), bool)
    orthologous = np.array([bool(s) for s in chosen.item_folds])
    report["comparisons"] = {
        "shipped": comparison(items, genes, everything, calls, shipped_pairs, replicates, seed),
        "tree": comparison(items, genes, holdable, calls, TREE_PAIRS, replicates, seed),
        "tree_orthologous": comparison(
            items, genes, holdable & orthologous, calls, TREE_PAIRS, replicates, seed
        ),
        "tree_control": comparison(items, genes, controlled, calls, CONTROL_PAIRS, replicates, seed),
    }
    if fold_probability is not None:
        deep = np.array([len(s) <= 1 for s in chosen.item_folds])
        report["comparisons"]["deep"] = comparison(items, genes, deep, calls, DEEP_PAIRS, replicates, seed)
        report["comparisons"]["deep_orthologous"] = comparison(
            items, genes, deep & orthologous, calls, DEEP_PAIRS, replicates, seed
        )
    report["apart"] = {
        "tree_genes_not_held_out": len(set(genes[~holdable].tolist())),
        "deep_genes_not_held_out": len(set(genes[[len(s) > 1 for s in chosen.item_folds]].tolist())),
    }
    return report
