"""The input tables' contract: the columns of a calls table and of a sequences table.

Declared once; the preflight (while the workflow is parsed) and extraction (the extract rule)
both import them. No polars here: the preflight runs inside Snakemake's parse.
"""

from __future__ import annotations

# One row per call of the base splice-site model. position, gene_start, gene_end: 1-based.
CALL_COLUMNS = ("gene_id", "chrom", "position", "strand", "splice_type", "pred_type")
OPTIONAL_CALL_COLUMNS = ("score", "gene_start", "gene_end")
STRANDS = ("+", "-")
SPLICE_TYPES = ("donor", "acceptor")
PRED_TYPES = ("TP", "FP", "FN", "TN")

# Instead of genome + calls: ready-made windows. label 1 = error, 0 = correct.
SEQUENCE_COLUMNS = ("sequence", "label")
OPTIONAL_SEQUENCE_COLUMNS = ("gene_id", "id")
