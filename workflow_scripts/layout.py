"""The per-run file layout, declared once: where each rule writes what another rule (or a later
reading of a finished run) reads, relative to the work directory. rules/*.smk name their inputs
and outputs from here, and so does the package where it opens another rule's files (site_calls'
fold runs, a finished site_calls run read back). Standard library only: Snakemake imports this
module while it parses the workflow.
"""

from __future__ import annotations

from dataclasses import dataclass

RESULTS = "results"

# index_genome: the genome as one array and its chromosomes' offsets (data/genome.py)
GENOME_DIR = f"{RESULTS}/genome"
GENOME_INDEX = f"{GENOME_DIR}/index.tsv"
GENOME_SEQUENCE = f"{GENOME_DIR}/sequence.npy"
GENOME_RECORD = f"{GENOME_DIR}/record.json"  # the FASTA's name, bytes and sha256 (evaluation/records.py)

# annotate_sites and cluster_genes: the annotation's tables (calling/contract.py: their columns)
ANNOTATION_DIR = f"{RESULTS}/annotation"
ANNOTATION_TABLES = ("sites", "genes", "exons", "gene_clusters")


def annotation_table(name: str) -> str:
    """results/annotation/<name>.parquet, `name` one of ANNOTATION_TABLES."""
    if name not in ANNOTATION_TABLES:
        raise ValueError(f"no annotation table {name!r}: one of {ANNOTATION_TABLES}")
    return f"{ANNOTATION_DIR}/{name}.parquet"


ANNOTATION_SITES = annotation_table("sites")
ANNOTATION_GENES = annotation_table("genes")
ANNOTATION_EXONS = annotation_table("exons")
ANNOTATION_GENE_CLUSTERS = annotation_table("gene_clusters")
ANNOTATION_SUMMARY = f"{ANNOTATION_DIR}/summary.json"

# score_base_model: shard i of n (Snakemake's wildcards) and the regions it scored beside it
SHARDS_DIR = f"{RESULTS}/base_model/shards"
SCORE_SHARD = SHARDS_DIR + "/{shard}-of-{shards}.parquet"
SCORE_SHARD_RECORD = SHARDS_DIR + "/{shard}-of-{shards}.regions.json"

# make_calls
CALLS_DIR = f"{RESULTS}/calls"
CALLS_TABLE = f"{CALLS_DIR}/calls.parquet"
CALLS_SUMMARY = f"{CALLS_DIR}/summary.json"

# site_calls, site_summary (docs/sites.md)
SITES_DIR = f"{RESULTS}/sites"
SITE_METRICS = f"{SITES_DIR}/site_metrics.json"
SITE_CORRECTED_CALLS = f"{SITES_DIR}/corrected_calls.parquet"
SITE_RESCORER = f"{SITES_DIR}/rescorer"

# calling.start regions: target_regions, rescore_sites
REGIONS_TABLE = f"{RESULTS}/regions/regions.parquet"
RESCORED_DIR = f"{RESULTS}/rescored"

# base_data: the base model's training data (BASE_DATA_CONTRACT.md, base_training/dataset.py);
# evaluate_base: the base models' metrics on its test blocks
BASE_DATA_DIR = f"{RESULTS}/base_data"
BASE_DATA_BLOCKS = f"{BASE_DATA_DIR}/blocks.parquet"
BASE_DATA_SEQUENCE = f"{BASE_DATA_DIR}/sequence.npy"
BASE_DATA_LABELS = f"{BASE_DATA_DIR}/labels.npy"
BASE_DATA_MANIFEST = f"{BASE_DATA_DIR}/manifest.json"
BASE_EVAL_DIR = f"{RESULTS}/base_eval"
BASE_EVAL_METRICS = f"{BASE_EVAL_DIR}/metrics.json"
BASE_EVAL_PLOT = f"{BASE_EVAL_DIR}/metrics.png"

# train_base (one job per seed): the models folder that calling.base_model.weights may name, and
# each seed's working folder (checkpoints, steps.jsonl, curves.png, tensorboard/)
TRAIN_BASE_DIR = f"{RESULTS}/train_base"
TRAIN_BASE_MODELS = f"{TRAIN_BASE_DIR}/models"
TRAIN_BASE_MODEL = TRAIN_BASE_MODELS + "/model_{context}nt_rs{seed}.pt"
TRAIN_BASE_PROVENANCE = TRAIN_BASE_MODELS + "/model_{context}nt_rs{seed}.provenance.json"
TRAIN_BASE_CARD = TRAIN_BASE_MODELS + "/model_{context}nt_rs{seed}.card.md"
TRAIN_BASE_RUN = TRAIN_BASE_DIR + "/runs/rs{seed}"


def names_train_base_models(weights: object) -> bool:
    """Whether calling.base_model.weights names train_base's models folder (built by the run)."""
    return isinstance(weights, str) and weights.rstrip("/").removeprefix("./") == TRAIN_BASE_MODELS


# summarize
SUMMARY_DIR = f"{RESULTS}/summary"

# One run's folder, results/<run>/ (config/runs.py: an experiment's fold and seed, or one of
# sites.model's fold runs); the files in it, relative to it.
RUN_WILDCARD = "{experiment}"
WINDOWS = "windows.parquet"  # extract, or site_windows for sites.model's runs
TOKENIZER_DIR = "tokenizer"  # tokenizer.kind bpe
BUCKET_MANIFEST = "buckets/manifest.parquet"
BUCKET_SUMMARY = "buckets/summary.json"
MODEL_WEIGHTS = "model/model.pt"
MODEL_CONFIG = "model/model.json"
MODEL_STEPS = "model/steps.jsonl"
PRETRAINED_ENCODER = "pretrain/encoder.pt"
PREDICTIONS = "evaluation/predictions.parquet"
METRICS = "evaluation/metrics.json"


def run_dir(run: str = RUN_WILDCARD) -> str:
    """results/<run>: one run's folder (by default Snakemake's wildcard)."""
    return f"{RESULTS}/{run}"


def run_file(name: str, run: str = RUN_WILDCARD) -> str:
    """results/<run>/<name>: a file of one run (by default Snakemake's wildcard)."""
    return f"{run_dir(run)}/{name}"


# sites.model's runs (config/runs.site_runs): fold i's candidates as windows, then bucket, train
# and evaluate as any run; site_calls reads these files of each.
SITE_EXPERIMENT = "site_candidates"
FOLD_RUN_FILES = (WINDOWS, BUCKET_MANIFEST, MODEL_WEIGHTS, MODEL_CONFIG, PREDICTIONS)


def site_fold_run(fold: int) -> str:
    """The name of sites.model's run that tests site_calls' fold `fold` (1-based)."""
    return f"{SITE_EXPERIMENT}_fold{fold}"


@dataclass(frozen=True)
class FoldRunFiles:
    """The files of one of sites.model's runs that site_calls reads (FOLD_RUN_FILES, named): the
    modules that read them take these paths and never join a run's folder with a file name."""

    run: str  # results/<run>, for messages
    windows: str
    manifest: str
    weights: str
    model_config: str
    predictions: str


def fold_run_files(run_folder: str) -> FoldRunFiles:
    """The FoldRunFiles of the run in `run_folder` (results/site_candidates_fold<i>, or such a
    folder inside another work directory)."""
    return FoldRunFiles(run_folder, *(f"{run_folder}/{name}" for name in FOLD_RUN_FILES))
