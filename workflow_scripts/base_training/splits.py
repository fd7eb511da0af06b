"""Train / validation / test for the blocks, never cutting a gene cluster.

`clusters`: the split unit is a set of spans (blocks.merged_spans) joined by their genes' clusters
(cluster_genes: neighbouring paralogs and genes sharing exonic sequence form one cluster), so a
cluster's genes, on either strand, land in one split. The units are shuffled with `seed` and cut by
their share of labelled nt: test first, then validation, the rest train; with at least three units
no split with a share > 0 is left empty. With `folds` = K >= 2 the shuffled units are cut into K
folds of about equal labelled nt; fold `fold` is test, and validation is taken (by
fractions.validation) from the units after it in the shuffled order, so K runs test every unit once.
`chromosome`: the blocks on `test_chromosomes` are test, on `validation_chromosomes` validation,
the rest train.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from workflow_scripts.errors import InputError

SPLITS = ("train", "validation", "test")


def find(parent: list[int], node: int) -> int:
    while parent[node] != node:
        parent[node] = parent[parent[node]]
        node = parent[node]
    return node


def split_units(spans: pl.DataFrame, clusters: pl.DataFrame) -> np.ndarray:
    """Per span (spans.span order 0..n-1): its unit, the spans joined by a shared gene cluster,
    numbered 0.. in span order. A gene without a cluster row is its own cluster."""
    cluster_of = dict(clusters.select("gene_id", "gene_cluster").iter_rows())
    parent = list(range(spans.height))
    first_span: dict[str, int] = {}
    for span, genes in zip(spans["span"].to_list(), spans["genes"].to_list(), strict=True):
        for gene in genes:
            key = cluster_of.get(gene, gene)
            if key in first_span:
                a, b = find(parent, first_span[key]), find(parent, span)
                parent[max(a, b)] = min(a, b)
            else:
                first_span[key] = span
    roots = np.array([find(parent, span) for span in range(spans.height)], dtype=np.int64)
    _, units = np.unique(roots, return_inverse=True)
    return units.astype(np.int64)


def cut_units(weights: np.ndarray, fractions: dict[str, float], seed: int) -> np.ndarray:
    """Per unit, its split index (0 train, 1 validation, 2 test): units shuffled with `seed`, test
    taken first by cumulative weight share, then validation."""
    n = len(weights)
    order = np.random.default_rng(seed).permutation(n)
    share = np.cumsum(weights[order]) / max(weights.sum(), 1)
    before = np.concatenate([[0.0], share[:-1]])
    test, validation = fractions["test"], fractions["validation"]
    eps = 1e-9  # 0.1 + 0.2 summed in floats is a hair above 0.3
    chosen = np.where(before < test - eps, 2, np.where(before < test + validation - eps, 1, 0))
    if n >= 3:  # a split asked for is never empty
        for index, wanted in ((2, test), (1, validation), (0, fractions["train"])):
            if wanted > 0 and not (chosen == index).any():
                donor = np.flatnonzero(np.bincount(chosen, minlength=3)[chosen] > 1)
                chosen[donor[-1] if index == 0 else donor[0]] = index
    result = np.empty(n, dtype=np.int64)
    result[order] = chosen
    return result


def fold_units(weights: np.ndarray, validation: float, seed: int, folds: int, fold: int) -> np.ndarray:
    """Per unit, its split index for fold `fold` of `folds`: the units shuffled with `seed` (the
    same order for every fold), cut into folds by cumulative weight share; the fold is test, the
    next units in the order (wrapping) validation up to `validation` of all the weight."""
    n = len(weights)
    if not 0 <= fold < folds or n < folds:
        raise InputError(
            "config", "base_data.fold", f"fold {fold} of {folds} folds over {n} gene-cluster units"
        )
    order = np.random.default_rng(seed).permutation(n)
    total = max(weights.sum(), 1)
    before = np.concatenate([[0.0], np.cumsum(weights[order])[:-1]]) / total
    fold_of = np.minimum((before * folds + 1e-9).astype(np.int64), folds - 1)
    chosen = np.where(fold_of == fold, 2, 0)
    last = int(np.flatnonzero(fold_of == fold).max())
    taken = 0.0
    for step in range(1, n):
        position = (last + step) % n
        if chosen[position] == 2 or taken >= validation - 1e-9:
            break
        chosen[position] = 1
        taken += weights[order[position]] / total
    result = np.empty(n, dtype=np.int64)
    result[order] = chosen
    return result


def check_fractions(fractions: dict[str, float]) -> None:
    total = sum(fractions[name] for name in SPLITS)
    if abs(total - 1) > 1e-6:
        raise InputError(
            "config", "base_data.fractions", f"train + validation + test must be 1 (got {total:g})"
        )


def cluster_splits(
    spans: pl.DataFrame,
    clusters: pl.DataFrame,
    fractions: dict[str, float],
    seed: int,
    folds: int = 0,
    fold: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """Per span: its split (index into SPLITS) and its unit; `folds` >= 2: fold `fold` is test."""
    check_fractions(fractions)
    units = split_units(spans, clusters)
    weights = np.bincount(units, weights=(spans["end"] - spans["start"]).to_numpy()).astype(np.float64)
    if folds >= 2:
        return fold_units(weights, fractions["validation"], seed, folds, fold)[units], units
    return cut_units(weights, fractions, seed)[units], units


def chromosome_splits(
    spans: pl.DataFrame, test: list, validation: list, chromosomes: list[str]
) -> np.ndarray:
    """Per span: its split index by chromosome."""
    named = {
        "base_data.test_chromosomes": [str(c) for c in test],
        "base_data.validation_chromosomes": [str(c) for c in validation],
    }
    known = ", ".join(chromosomes[:5]) + (", ..." if len(chromosomes) > 5 else "")
    for key, names in named.items():
        for name in names:
            if name not in chromosomes:
                raise InputError("config", key, f"chromosome '{name}' not in the genome ({known})")
    if not named["base_data.test_chromosomes"]:
        raise InputError(
            "config", "base_data.test_chromosomes", "base_data.split chromosome needs at least one"
        )
    chrom = spans["chrom"]
    return np.where(
        chrom.is_in(named["base_data.test_chromosomes"]).to_numpy(),
        2,
        np.where(chrom.is_in(named["base_data.validation_chromosomes"]).to_numpy(), 1, 0),
    ).astype(np.int64)
