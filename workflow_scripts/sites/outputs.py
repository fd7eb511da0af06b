"""What site_calls writes: the corrected-calls table and BED tracks of the calls (the answer: answer.py).

corrected_calls.parquet: one row per candidate and one per missed annotated site (no candidate
within ±w: `is_candidate` false, never called), in genome order. BED (6 columns, 0-based start,
a `track` line; IGV and the UCSC browser load it): one line per called candidate, the single base
at its position (start = position - 1), named `<splice_type>:annotated` or `<splice_type>:new`
(no annotated site within ±w; the splice type alone without an annotation), its score the
predictor's probability × 1000. The same calls as GFF3: sites/gff3.py.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from workflow_scripts.calling.contract import GENE_CLUSTER
from workflow_scripts.calling.scores import POSITION_BITS
from workflow_scripts.sites.candidates import Candidates
from workflow_scripts.sites.gff3 import gff3_text
from workflow_scripts.sites.predictors import (
    BASE_THRESHOLD,
    BASE_TUNED,
    CALL_COLUMNS,
    OPTIONAL_GROUPS,
    SCORE_COLUMNS,
    THRESHOLD_COLUMNS,
    TREE,
    OutOfFold,
    per_candidate,
)

TABLE_COLUMNS = (
    "chrom",
    "position",
    "strand",
    "splice_type",
    "gene_id",
    GENE_CLUSTER,
    "fold",
    "is_candidate",
    SCORE_COLUMNS[BASE_THRESHOLD],
    SCORE_COLUMNS[TREE],
    "is_true_site",
    *(CALL_COLUMNS[name] for name in (BASE_THRESHOLD, BASE_TUNED, TREE)),
    THRESHOLD_COLUMNS[BASE_TUNED],
    THRESHOLD_COLUMNS[TREE],
)


def optional_columns(score: str) -> tuple[str, ...]:
    """An optional score's column, then the calls and thresholds of the predictors it adds
    (sites/predictors.py: OPTIONAL_GROUPS)."""
    group = OPTIONAL_GROUPS[score]
    calls = tuple(CALL_COLUMNS[name] for name in group)
    return (SCORE_COLUMNS[score], *calls, *(THRESHOLD_COLUMNS[name] for name in group))


# each optional score's column (an OutOfFold field) and the columns it adds, in table order: the
# k-mer baseline (site_calls always runs it), sites.model's errorseq, sites.transfer's tree and
# thresholds and, when the source genome ran sites.model, its deep models
OPTIONAL_COLUMNS = {SCORE_COLUMNS[score]: optional_columns(score) for score in OPTIONAL_GROUPS}
KMER_COLUMNS, ERRORSEQ_COLUMNS, TRANSFER_COLUMNS, TRANSFER_ERRORSEQ_COLUMNS = OPTIONAL_COLUMNS.values()
PROBABILITY_COLUMNS = (SCORE_COLUMNS[TREE], *OPTIONAL_COLUMNS)


def table_columns(predictions: OutOfFold) -> tuple[str, ...]:
    added = (columns for name, columns in OPTIONAL_COLUMNS.items() if getattr(predictions, name) is not None)
    return TABLE_COLUMNS + tuple(column for columns in added for column in columns)


def with_thresholds(frame: pl.DataFrame, predictions: OutOfFold) -> pl.DataFrame:
    folds, types = frame["fold"].to_numpy(), frame["splice_type"].to_numpy()
    return frame.with_columns(
        pl.Series(THRESHOLD_COLUMNS[name], per_candidate(thresholds, folds, types))
        for name, thresholds in predictions.thresholds.items()
    )


def candidate_rows(found: Candidates, predictions: OutOfFold) -> pl.DataFrame:
    calls = [pl.Series(CALL_COLUMNS[name], called) for name, called in predictions.calls.items()]
    for name in OPTIONAL_COLUMNS:
        if getattr(predictions, name) is not None:
            calls.append(pl.Series(name, getattr(predictions, name), dtype=pl.Float32))
    return found.table.with_columns(
        *calls,
        pl.Series(SCORE_COLUMNS[TREE], predictions.tree_probability, dtype=pl.Float32),
        is_candidate=pl.lit(True),
    )


def missed_site_rows(found: Candidates, predictions: OutOfFold) -> pl.DataFrame:
    missed = found.sites.filter(pl.Series(found.missed))
    return missed.with_columns(
        *(pl.lit(False).alias(CALL_COLUMNS[name]) for name in predictions.calls),
        *(pl.lit(None, dtype=pl.Float32).alias(name) for name in PROBABILITY_COLUMNS),
        is_candidate=pl.lit(False),
        is_true_site=pl.lit(True),
    )


def corrected_calls(found: Candidates, predictions: OutOfFold) -> pl.DataFrame:
    parts = [candidate_rows(found, predictions), missed_site_rows(found, predictions)]
    rows = with_thresholds(pl.concat(parts, how="diagonal_relaxed"), predictions)
    chrom_order = (pl.col("key") // (1 << (POSITION_BITS + 1))).alias("chrom_order")  # genome order
    return rows.sort(chrom_order, "position", "strand", "splice_type").select(table_columns(predictions))


def called(table: pl.DataFrame, predictor: str, score_column: str) -> pl.DataFrame:
    """The candidates `predictor` calls, their `score_column` as `probability` (the tracks' score)."""
    return table.filter(pl.col(CALL_COLUMNS[predictor])).with_columns(
        pl.col(score_column).cast(pl.Float64).alias("probability")
    )


def bed_text(table: pl.DataFrame, predictor: str, score_column: str, description: str) -> str:
    """A BED6 track of the candidates `predictor` calls, scored by `score_column`; without an
    `is_true_site` column (no annotation) each is named by its splice type alone."""
    calls = called(table, predictor, score_column)
    header = f'track name="{predictor}" description="{description}" useScore=1\n'
    scores = np.clip(np.rint(calls["probability"].to_numpy() * 1000), 0, 1000).astype(int)
    if "is_true_site" in calls.columns:
        names = [
            f"{t}:{'annotated' if true else 'new'}"
            for t, true in zip(calls["splice_type"], calls["is_true_site"])
        ]
    else:
        names = calls["splice_type"].to_list()
    lines = [
        f"{chrom}\t{position - 1}\t{position}\t{name}\t{score}\t{strand}\n"
        for chrom, position, strand, name, score in zip(
            calls["chrom"], calls["position"], calls["strand"], names, scores
        )
    ]
    return header + "".join(lines)


def call_tracks(
    table: pl.DataFrame, predictor: str, chrom_lengths: dict[str, int], description: str
) -> tuple[str, str, int]:
    """`predictor`'s calls as BED and as GFF3 (annotated yes/no where the table has
    is_true_site), and how many calls the GFF3 leaves out at chromosome ends (sites/gff3.py)."""
    score_column = SCORE_COLUMNS[predictor]
    annotated = "is_true_site" if "is_true_site" in table.columns else None
    gff3, outside = gff3_text(called(table, predictor, score_column), predictor, chrom_lengths, annotated)
    return bed_text(table, predictor, score_column, description), gff3, outside
