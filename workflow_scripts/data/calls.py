"""The input tables' contract: the columns of a calls table and of a sequences table.

Declared once; the preflight (while the workflow is parsed) and extraction (the extract rule)
both import them and check a header with the same functions (`check_calls_header`,
`check_sequences_header`). No polars here: the preflight runs inside Snakemake's parse.

Every column of a calls table is kept in windows.parquet (beside the columns errorseq derives),
so a table may carry more (transcript_id, window_score, ...), but none named like a column
errorseq derives or uses internally (RESERVED_COLUMNS): such a column would be silently replaced
or mistaken for errorseq's own.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from workflow_scripts.data.tables import require_columns
from workflow_scripts.errors import InputError

# the gene cluster a call lies in (calls made by the pipeline: cluster_genes, calling/paralogs.py):
# data splits keep each cluster in one split
GENE_CLUSTER = "gene_cluster"

# One row per call of the base splice-site model. position, gene_start, gene_end: 1-based.
CALL_COLUMNS = ("gene_id", "chrom", "position", "strand", "splice_type", "pred_type")
OPTIONAL_CALL_COLUMNS = ("score", "gene_start", "gene_end")
SITE_KEY = ("chrom", "position", "strand", "splice_type")  # one call per site
STRANDS = ("+", "-")
SPLICE_TYPES = ("donor", "acceptor")
PRED_TYPES = ("TP", "FP", "FN", "TN")

# Instead of genome + calls: ready-made windows. label 1 = error, 0 = correct.
SEQUENCE_COLUMNS = ("sequence", "label")
OPTIONAL_SEQUENCE_COLUMNS = ("gene_id", "id")

# Columns errorseq derives: windows.parquet (extract) and predictions.parquet (evaluate).
DERIVED_WINDOW_COLUMNS = ("id", "split", "label", "sequence", "length", "site_offset")
DERIVED_PREDICTION_COLUMNS = ("prob", "pred", "bucket")
INTERNAL_PREFIX = "__"  # extraction's working columns (row numbers, chromosome index)
RESERVED_COLUMNS = (*DERIVED_WINDOW_COLUMNS, *DERIVED_PREDICTION_COLUMNS)
# A sequences table brings its own sequence, label and id.
RESERVED_SEQUENCE_COLUMNS = tuple(
    name for name in RESERVED_COLUMNS if name not in ("sequence", "label", "id")
)


def check_calls_header(path: str | Path, names: Sequence[str]) -> None:
    """The required call columns are there and no column takes a reserved name."""
    require_columns(path, names, CALL_COLUMNS)
    refuse_reserved(path, names, RESERVED_COLUMNS)


def check_sequences_header(path: str | Path, names: Sequence[str]) -> None:
    require_columns(path, names, SEQUENCE_COLUMNS)
    refuse_reserved(path, names, RESERVED_SEQUENCE_COLUMNS)


def refuse_reserved(path: str | Path, names: Sequence[str], reserved: Sequence[str]) -> None:
    for name in names:
        if name in reserved or name.startswith(INTERNAL_PREFIX):
            raise InputError(
                path,
                f"column '{name}'",
                "reserved name: errorseq derives a column of that name; rename or drop this column",
            )
