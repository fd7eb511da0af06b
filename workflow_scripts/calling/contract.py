"""The calling artifacts' columns, declared once (the `calling:` keys each rule reads are in its
declaration, config/stages/).

No polars here: the preflight and rules/common.smk import this while Snakemake parses the
workflow.
"""

from __future__ import annotations

from workflow_scripts.data import calls as data_calls

# results/annotation/sites.parquet: one row per (chrom, position, strand, splice_type); annotate_sites
# adds n_transcripts (how many selected transcripts share the site).
SITE_COLUMNS = ("gene_id", "transcript_id", "chrom", "position", "strand", "splice_type")
# results/annotation/genes.parquet: start, end 1-based inclusive.
GENE_COLUMNS = ("gene_id", "chrom", "start", "end", "strand", "biotype")
# results/annotation/exons.parquet: the selected transcripts' exons (1-based inclusive).
EXON_COLUMNS = ("gene_id", "chrom", "start", "end", "strand")
# results/annotation/gene_clusters.parquet (cluster_genes, calling/paralogs.py): make_calls carries
# the cluster into the calls: the calls table's column GENE_CLUSTER, declared in data/calls.py (data
# splits read it, and data/ lies below calling/) and named here for the calling artifacts' readers.
GENE_CLUSTER = data_calls.GENE_CLUSTER
# A scores table (score_base_model's output or the user's): one row per scored position.
SCORE_COLUMNS = ("gene_id", "chrom", "strand", "position", "donor", "acceptor")
# results/calls/calls.parquet: the calls table's columns (data/calls.py) and more.
CALLS_COLUMNS = (
    "gene_id",
    "chrom",
    "position",
    "strand",
    "splice_type",
    "pred_type",
    "score",
    "window_score",
    "gene_start",
    "gene_end",
    "transcript_id",
    "dinucleotide",
    "tn_strategy",
)
