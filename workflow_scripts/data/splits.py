"""Gene-level train/val/test split: every gene's rows land in exactly one split."""

from __future__ import annotations

import numpy as np
import polars as pl

from workflow_scripts.errors import InputError

SPLIT_NAMES = ("train", "val", "test")


def parse_fractions(text: str, source: str = "command line", field: str = "--split-fractions") -> tuple[float, float, float]:
    """'0.8,0.1,0.1' -> (0.8, 0.1, 0.1); three numbers >= 0 summing to 1."""
    try:
        values = tuple(float(part) for part in str(text).split(","))
    except ValueError:
        raise InputError(source, field, f"expected three numbers like 0.8,0.1,0.1, got {text!r}") from None
    if len(values) != 3:
        raise InputError(source, field, f"expected three numbers (train,val,test), got {text!r}")
    if any(not np.isfinite(v) or v < 0 for v in values) or abs(sum(values) - 1.0) > 1e-6:
        raise InputError(source, field, f"must be >= 0 and sum to 1, got {text!r}")
    return values


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
    mapping = pl.DataFrame({gene_ids.name: genes.gather(order), "split": np.array(SPLIT_NAMES)[split_of_gene]})
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
