"""sites.model: the windows errorseq's deep model re-scores site_calls' candidates from, one
windows.parquet per fold (runs site_candidates_fold<i>: config/runs.site_runs).

Every candidate (sites/candidates.py) is one window cut as extract cuts a call's (data/windows.
call_windows: window.flank nt each side, the site at site_offset, minus strand reverse-complemented)
with the base model's score profiles along it (calling/score_profiles.py) and its call columns
(`score` = base_score, `splice_type`), labelled 1 when it is a true site. The run of fold i tests
the candidates of site_calls' fold i (the same folds: sites/inputs.folded_candidates); the other
folds' gene clusters are cut into train and val in the ratio split.fractions.train : val,
shuffled with sites.seed, so val (the epoch, and site_calls' threshold for errorseq) never holds a
test-fold gene. A window's id is its candidate's key, `chrom:position:strand:splice_type`.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from workflow_scripts.calling.contract import GENE_CLUSTER
from workflow_scripts.config.types import FractionsSection
from workflow_scripts.data.call_table import CHROM_INDEX
from workflow_scripts.data.genome import Genome
from workflow_scripts.data.splits import SPLIT_NAMES, TEST, cut_by_row_share, shuffled_genes
from workflow_scripts.data.windows import OUTPUT_COLUMNS, SITE_OFFSET, call_windows

LABELS = {"error": "true site", "correct": "false candidate"}  # label 1 and label 0 (model.json)
CARRIED = ("chrom", "position", "strand", "splice_type", "score", GENE_CLUSTER, "fold")


def candidate_ids(table: pl.DataFrame) -> pl.Series:
    """`chrom:position:strand:splice_type`: one id per candidate (a position can be both types)."""
    return table.select(
        pl.concat_str(
            [pl.col("chrom"), pl.col("position").cast(pl.String), pl.col("strand"), pl.col("splice_type")],
            separator=":",
        ).alias("id")
    )["id"]


def candidate_windows(table: pl.DataFrame, genome: Genome, flank: int) -> pl.DataFrame:
    """The candidates (site_calls' table with gene_cluster and fold) as labelled windows, no split yet."""
    frame = table.with_columns(
        candidate_ids(table),
        pl.col("is_true_site").cast(pl.Int8).alias("label"),
        pl.col("base_score").cast(pl.Float64).alias("score"),
        pl.col("chrom").replace_strict(genome.index_of, return_dtype=pl.Int64).alias(CHROM_INDEX),
        pl.col("fold").cast(pl.Int64),
    )
    return frame.with_columns(*call_windows(genome, frame, flank)).select(
        "id", "gene_id", "label", "sequence", "length", SITE_OFFSET, *CARRIED
    )


def fold_splits(frame: pl.DataFrame, fold: int, fractions: FractionsSection, seed: int) -> pl.Series:
    """test: the candidates of `fold`; the other folds' gene clusters shuffled with `seed` and cut
    by row share into train and val (fractions train : val)."""
    in_test = (frame["fold"] == fold).to_numpy()
    rest = frame.filter(pl.Series(~in_test))[GENE_CLUSTER]
    clusters, rows = shuffled_genes(rest, seed)
    train_val = np.array([fractions.train, fractions.val], dtype=float)
    parts = cut_by_row_share(rows, train_val / train_val.sum())
    mapping = pl.DataFrame({GENE_CLUSTER: clusters, "split": np.array(SPLIT_NAMES)[parts]})
    joined = frame.select(GENE_CLUSTER).join(mapping, on=GENE_CLUSTER, how="left", maintain_order="left")
    return joined["split"].fill_null(SPLIT_NAMES[TEST]).alias("split")


def fold_windows(windows: pl.DataFrame, fold: int, fractions: FractionsSection, seed: int) -> pl.DataFrame:
    """The run of `fold`'s windows.parquet: extract's column order (data/windows.split_windows)."""
    frame = windows.with_columns(fold_splits(windows, fold, fractions, seed))
    rest = [c for c in frame.columns if c not in (*OUTPUT_COLUMNS, SITE_OFFSET)]
    return frame.select(*OUTPUT_COLUMNS, SITE_OFFSET, *rest)
