"""The pieces of the declarations several rules share: their common inputs and options."""

from __future__ import annotations

import os

from workflow_scripts.config.stage import Input, Option, Output

CONSOLE = Option(
    "console_fd",
    "a file descriptor on Snakemake's console for the progress lines (the rules: 3, with 3>&2)",
    type=int,
)

EXPERIMENT = Option("experiment", "the experiment wildcard", required=True)

OUT_DIR = Option("out_dir", "folder of the plots (the rule's plots output)", required=True)

# calling: the keys site_calls, site_windows and rescore_sites read
SITE_CALLING = ("threshold", "consensus_window")

SCORES = Input("scores", "scores tables (.parquet, .tsv, .csv): one, or every shard's", many=True)

SITES = Input("sites", "sites.parquet (annotate_sites)")

GENES = Input("genes", "genes.parquet (annotate_sites)")

GENE_CLUSTERS = Input("gene_clusters", "gene_clusters.parquet (cluster_genes)")

SCORED_REGIONS = Input(
    "regions",
    "calling.regions with start annotation: the scored regions (regions.parquet), a whole-region scan",
    required=False,
)

# provenance travels with the data (evaluation/records.py, provenance.py): the records of the
# user's files the jobs that read them wrote, read by site_calls, rescore_sites and summarize
GENOME_RECORD = Input("genome_record", "index_genome's record.json: the FASTA's facts", required=False)

ANNOTATION_SUMMARY = Input(
    "annotation_summary", "annotate_sites' summary.json: the annotation's facts", required=False
)

SCORE_RECORDS = Input(
    "score_records",
    "every score shard's regions.json: the base model's weights' facts",
    required=False,
    many=True,
)

# calling.start scores with calling.base_model.weights: the model that made the scores table, not
# run; hashed into the provenance's made_by, and a transferred re-scorer is checked against it
MADE_BY = Input(
    "made_by",
    "calling.start scores: the weights that made the scores table (calling.base_model.weights)",
    required=False,
    many=True,
    key="calling.base_model.weights",
)

RUN_WINDOWS = Input("windows", "windows parquet (extract)")

RUN_MANIFEST = Input("manifest", "bucket manifest (bucket): split, bucket per window")

BUCKET_SUMMARY = Input("bucket_summary", "bucket summary.json (bucket)")

MODEL = Input("model", "model.pt written by train")

MODEL_CONFIG = Input("model_config", "model.json written by train")

DEEPSPEED_CONFIG = Input(
    "deepspeed_config", "train.deepspeed_config (read through the config)", required=False, passed=False
)
# what train and pretrain (one Snakemake body, rules/pretrain.smk) both read
TRAINING_INPUTS = (RUN_WINDOWS, RUN_MANIFEST, BUCKET_SUMMARY, DEEPSPEED_CONFIG)

RUN_OPTIONS = (
    Option("checkpoint_dir", "resumable checkpoints", required=True),
    EXPERIMENT,
    CONSOLE,
    Option("gpus", "GPUs given to this job (resources.gpu)", type=int, default=0),
    Option("cpu_procs", "processes when there is no GPU (resources.cpu_procs)", type=int, default=2),
    Option("threads", "CPU cores of the job (threads)", type=int, default=os.cpu_count() or 1),
    Option("nodes", "nodes of the job (resources.nodes)", type=int, default=1),
)

RUN_OUTPUTS = (Output("steps", "steps.jsonl"),)
