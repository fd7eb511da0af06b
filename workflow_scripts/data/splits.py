"""Which split (train, val, test) each window goes to, by the `split:` config section.

- `by: gene`, `folds: 1` (the default): genes are shuffled with `seed` and cut by cumulative row
  share into train/val/test by `fractions`.
- `by: gene`, `folds: k > 1`: the same shuffled genes are cut into k parts of about equal row
  share. The run of fold i tests on part i; the other genes are cut into train and val in the
  ratio fractions.train : fractions.val (fractions.test is not used). Every gene is in exactly
  one test part, so the k runs together test every gene once.
- `by: chromosome`: the windows on `test_chromosomes` are test, on `val_chromosomes` val, all
  others train.

Every gene's (or chromosome's) rows land in exactly one split, and the result depends only on
the set of genes and their row counts, not on row order. Where the windows carry a `gene_cluster`
column (calls made by the pipeline: neighbouring paralogs and overlapping genes, calling/paralogs.py)
the unit is the cluster rather than the gene, so near-copies never straddle train and test.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from workflow_scripts.config.split_checks import HELD_OUT_CHROMOSOMES, check_split_config
from workflow_scripts.config.types import SplitSection
from workflow_scripts.data.calls import GENE_CLUSTER
from workflow_scripts.errors import InputError

SPLIT_NAMES = ("train", "val", "test")
TRAIN, VAL, TEST = range(len(SPLIT_NAMES))
CHROM_COLUMN = "chrom"


def split_fractions(split: SplitSection) -> tuple[float, ...]:
    """(train, val, test) from a checked `split:` config section (they sum to 1)."""
    return tuple(float(getattr(split.fractions, name)) for name in SPLIT_NAMES)


def assign_splits(frame: pl.DataFrame, split: SplitSection, fold: int | None, source) -> pl.Series:
    """The split of every row of `frame` (gene_id, and chrom for by chromosome); `fold` (1..k) is
    the run's test fold when split.folds > 1. `source` names the input in errors."""
    check_split_config(split)
    if split.by == "chromosome":
        return assign_chromosome_splits(frame, split, source)
    groups = split_groups(frame)
    if split.folds == 1:
        return assign_gene_splits(groups, split_fractions(split), split.seed)
    if fold is None or not 1 <= fold <= split.folds:
        raise ValueError(f"fold {fold} is not one of 1..{split.folds} (split.folds)")
    return assign_fold_splits(groups, split, fold, source)


def split_groups(frame: pl.DataFrame) -> pl.Series:
    """What stays together in one split: the gene's cluster where the table names one, else the gene."""
    if GENE_CLUSTER not in frame.columns:
        return frame["gene_id"]
    return frame.select(pl.coalesce(GENE_CLUSTER, "gene_id").alias("gene_id"))["gene_id"]


def shuffled_genes(gene_ids: pl.Series, seed: int) -> tuple[pl.Series, np.ndarray]:
    """The distinct genes in a seeded random order, and each one's row count."""
    counts = gene_ids.value_counts(name="rows").sort(gene_ids.name)
    order = np.random.default_rng(seed).permutation(counts.height)
    return counts[gene_ids.name].gather(order), counts["rows"].to_numpy()[order]


def split_per_row(gene_ids: pl.Series, genes: pl.Series, split_of_gene: np.ndarray) -> pl.Series:
    """Spread each gene's split index onto its rows, as split names."""
    mapping = pl.DataFrame({gene_ids.name: genes, "split": np.array(SPLIT_NAMES)[split_of_gene]})
    joined = gene_ids.to_frame().join(mapping, on=gene_ids.name, how="left", maintain_order="left")
    return joined["split"]


def assign_gene_splits(gene_ids: pl.Series, fractions, seed: int) -> pl.Series:
    """Split label per row; genes are shuffled with `seed` and cut by cumulative row share.

    Each split with a nonzero fraction gets at least one gene when there are enough genes.
    """
    genes, rows = shuffled_genes(gene_ids, seed)
    return split_per_row(gene_ids, genes, cut_by_row_share(rows, np.asarray(fractions, dtype=float)))


def gene_folds(rows: np.ndarray, k: int) -> np.ndarray:
    """Fold index (0..k-1) per gene, in the given gene order: k parts of about equal row share,
    none empty when there are at least k genes."""
    return cut_by_row_share(rows, np.full(k, 1.0 / k))


def assign_fold_splits(gene_ids: pl.Series, split: SplitSection, fold: int, source) -> pl.Series:
    """Fold `fold` of split.folds: its genes are test, the others train and val (module docstring)."""
    k = split.folds
    genes, rows = shuffled_genes(gene_ids, split.seed)
    if len(genes) < k:
        raise InputError(
            source, "split.folds", f"{k} folds need at least {k} genes; the windows have {len(genes)}"
        )
    in_test = gene_folds(rows, k) == fold - 1
    train_val = np.array([split.fractions.train, split.fractions.val], dtype=float)
    split_of_gene = np.full(len(genes), TEST)
    split_of_gene[~in_test] = cut_by_row_share(rows[~in_test], train_val / train_val.sum())
    return split_per_row(gene_ids, genes, split_of_gene)


def assign_chromosome_splits(frame: pl.DataFrame, split: SplitSection, source) -> pl.Series:
    """test_chromosomes → test, val_chromosomes → val, every other chromosome → train."""
    if CHROM_COLUMN not in frame.columns:
        raise InputError(
            source,
            "split.by",
            "chromosome needs a 'chrom' column, which this table lacks (use split.by: gene)",
        )
    chroms = frame[CHROM_COLUMN].cast(pl.String)
    present = sorted(chroms.unique().drop_nulls().to_list())
    listed = ", ".join(present)
    if len(present) < len(SPLIT_NAMES):
        raise InputError(
            source,
            "split.by",
            f"the windows lie on {len(present)} chromosome(s) ({listed}); a chromosome hold-out needs at "
            "least 3 (train, val and test each need one): use split.by: gene",
        )
    held_out: dict[str, str] = {}
    for name, field in HELD_OUT_CHROMOSOMES.items():
        for chromosome in map(str, getattr(split, field.split(".")[1])):
            if chromosome not in present:
                raise InputError(
                    source, field, f"{chromosome!r} is not a chromosome of the windows ({listed})"
                )
            held_out[chromosome] = name
    if len(held_out) == len(present):
        raise InputError(
            source,
            "split.val_chromosomes",
            f"every chromosome ({listed}) is held out: none is left to train on",
        )
    return chroms.replace_strict(held_out, default="train", return_dtype=pl.String).alias("split")


def cut_by_row_share(rows: np.ndarray, fractions: np.ndarray) -> np.ndarray:
    """Part index (0..len(fractions)-1) per gene, in the given gene order."""
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
