"""Gene-level train/val/test split: every gene's rows land in exactly one split."""

from __future__ import annotations

import numpy as np
import polars as pl

SPLIT_NAMES = ("train", "val", "test")


def split_fractions(split: dict) -> tuple[float, ...]:
    """(train, val, test) from a checked `split:` config section (they sum to 1)."""
    return tuple(float(split["fractions"][name]) for name in SPLIT_NAMES)


def assign_gene_splits(gene_ids: pl.Series, fractions, seed: int) -> pl.Series:
    """Split label per row; genes are shuffled with `seed` and cut by cumulative row share.

    Each split with a nonzero fraction gets at least one gene when there are
    enough genes. The result depends only on the set of genes and their row
    counts, not on row order.
    """
    counts = gene_ids.value_counts(name="rows").sort(gene_ids.name)
    genes = counts[gene_ids.name]
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(genes))
    rows = counts["rows"].to_numpy()[order]
    split_of_gene = cut_by_row_share(rows, np.asarray(fractions, dtype=float))
    mapping = pl.DataFrame(
        {gene_ids.name: genes.gather(order), "split": np.array(SPLIT_NAMES)[split_of_gene]}
    )
    joined = gene_ids.to_frame().join(mapping, on=gene_ids.name, how="left", maintain_order="left")
    return joined["split"]


def cut_by_row_share(rows: np.ndarray, fractions: np.ndarray) -> np.ndarray:
    """Split index (0/1/2) per gene, in the given gene order."""
    total = rows.sum()
    midpoints = (np.cumsum(rows) - rows / 2) / max(total, 1)
    boundaries = np.cumsum(fractions)[:-1]
    split = np.searchsorted(boundaries, midpoints, side="right")
    return ensure_nonempty(split, fractions)


def ensure_nonempty(split: np.ndarray, fractions: np.ndarray) -> np.ndarray:
    """Move single genes into empty nonzero-fraction splits, taken from the largest split."""
    split = split.copy()
    for target in np.flatnonzero(fractions > 0):
        sizes = np.bincount(split, minlength=len(fractions))
        if sizes[target] > 0:
            continue
        donor = int(np.argmax(sizes))
        if sizes[donor] < 2:
            break
        # Take the donor gene nearest the target's position in the shuffled order.
        candidates = np.flatnonzero(split == donor)
        split[candidates[-1] if target > donor else candidates[0]] = target
    return split
