"""Every rule's declaration (config/stage.py): its inputs, outputs, config and options, once.

The program workflow_scripts/rules/<rule>.py parses its command line with `STAGES[rule].parse`;
rules/common.smk builds the rule's flags (`path_args(rule)`) and `--config` (`stage_config(rule)`)
from the same declaration, and tests/workflow/test_rule_commands.py checks that each rule's
`input:` and `output:` names are the declared ones. Where a stage reads only some keys of a
section, those keys are all it gets: a change of another key does not rerun it (calling.threshold
does not re-annotate), and reading another key is an error (stage.UndeclaredConfig).
"""

from __future__ import annotations

import dataclasses
import os

from workflow_scripts import layout
from workflow_scripts.config.stage import WHOLE, Input, Option, Output, Stage

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
TRANSFER = Input("transfer", "sites.transfer: another genome's re-scorer folder", required=False)
RUN_WINDOWS = Input("windows", "windows parquet (extract)")
RUN_MANIFEST = Input("manifest", "bucket manifest (bucket): split, bucket per window")
BUCKET_SUMMARY = Input("bucket_summary", "bucket summary.json (bucket)")
MODEL = Input("model", "model.pt written by train")
MODEL_CONFIG = Input("model_config", "model.json written by train")
DEEPSPEED_CONFIG = Input(
    "deepspeed_config", "train.deepspeed_config (read through the config)", required=False, passed=False
)
# sites.model: site_calls reads these of each run site_candidates_fold<i> (layout.FoldRunFiles),
# one path per fold, in fold order
FOLD_RUN_INPUTS = tuple(
    Input(f"fold_{field.name}", f"sites.model: each fold run's {file}", required=False, many=True)
    for field, file in zip(dataclasses.fields(layout.FoldRunFiles)[1:], layout.FOLD_RUN_FILES, strict=True)
)
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

STAGE_LIST = (
    Stage(
        "demo_data",
        "The demo's synthetic genome and calls.",
        outputs=(
            Output("genome", "output FASTA (.fa, or .fa.gz for gzip)"),
            Output("calls", "output calls TSV"),
        ),
        config={"demo": WHOLE},
    ),
    Stage(
        "index_genome",
        "A FASTA -> the genome index (sequence.npy and index.tsv).",
        inputs=(Input("fasta", "plain, gzip or bgzip FASTA"),),
        outputs=(
            Output("sequence", "output: the bases (sequence.npy)"),
            Output("index", "output: name, length, offset per chromosome (index.tsv)"),
        ),
        config={"index_genome": WHOLE},
    ),
    Stage(
        "annotate_sites",
        "A GTF/GFF3 annotation -> sites.parquet and genes.parquet.",
        inputs=(Input("annotation", "GTF or GFF3, plain or gzip"),),
        outputs=(
            Output("sites", "sites parquet"),
            Output("genes", "gene spans parquet"),
            Output(
                "exons", "the selected transcripts' exons (parquet; cluster_genes reads it)", required=False
            ),
            Output("summary", "counts and GT/AG shares (JSON)", required=False),
        ),
        config={"calling": ("biotypes", "transcripts", "region")},
        genome=True,
    ),
    Stage(
        "cluster_genes",
        "The annotation's genes -> paralog clusters (gene_clusters.parquet).",
        inputs=(Input("exons", "exons.parquet (annotate_sites)"), GENES),
        outputs=(Output("gene_clusters", "gene clusters parquet"),),
        config={"calling": ("paralogs",)},
        genome=True,
    ),
    Stage(
        "score_base_model",
        "One shard of the genes scored by the base model (calling.base_model).",
        inputs=(
            Input("genes", "gene spans (genes.parquet: gene_id, chrom, start, end, strand)"),
            Input("weights", "SpliceAI .h5 or OpenSpliceAI .pt models, or one directory of them", many=True),
        ),
        outputs=(
            Output("scores", "output scores parquet"),
            Output(
                "regions",
                "the shard's record: its shard and regions (JSON; calling/shards.py)",
                required=False,
            ),
        ),
        config={"calling": ("base_model",)},
        options=(
            Option("shard", "which shard to score, 1..--shards", type=int, default=1),
            Option("shards", "how many shards the genes are split into", type=int, default=1),
            CONSOLE,
        ),
        genome=True,
    ),
    Stage(
        "make_calls",
        "The base model's scores and the annotation -> the calls table.",
        inputs=(
            SCORES,
            SITES,
            GENES,
            Input(
                "gene_clusters",
                "gene_clusters.parquet (cluster_genes): carried into the calls",
                required=False,
            ),
        ),
        outputs=(
            Output("calls", "calls parquet"),
            Output("summary", "counts per splice type and call, TN report (JSON)", required=False),
        ),
        config={"calling": ("threshold", "consensus_window", "negatives")},
        genome=True,
    ),
    Stage(
        "site_windows",
        "site_calls' candidates as windows, one windows.parquet per fold (sites.model).",
        inputs=(SCORES, SITES, GENES, GENE_CLUSTERS),
        outputs=(Output("windows", "the windows of folds 1..sites.folds, in fold order", many=True),),
        # what the candidates and their folds depend on: another sites key does not retrain
        config={
            "calling": SITE_CALLING,
            "sites": ("floor", "peak_radius", "folds", "seed"),
            "window": WHOLE,
            "split": ("fractions",),
        },
        options=(CONSOLE,),
        genome=True,
    ),
    Stage(
        "site_calls",
        "Site-level re-scored calls: the base model, its tuned thresholds, a tree, k-mers, errorseq.",
        inputs=(
            SCORES,
            SITES,
            GENES,
            GENE_CLUSTERS,
            TRANSFER,
            *FOLD_RUN_INPUTS,
        ),
        outputs=(
            Output("calls", "corrected calls (parquet)"),
            Output("tree_bed", "BED of the tree's calls"),
            Output("base_bed", "BED of the base model's calls at calling.threshold"),
            Output("metrics", "site_metrics.json"),
            Output("rescorer", "re-scorer folder: tree and thresholds on all genes"),
            Output("errorseq_bed", "BED of errorseq's calls (sites.model)"),
            Output("corrected_bed", "BED of the recommended predictor's calls", required=False),
            Output("corrected_gff3", "GFF3 of the recommended predictor's calls", required=False),
        ),
        config={
            "calling": SITE_CALLING,
            "sites": WHOLE,
            "window": ("flank",),
            "evaluate": ("kmer_max_k", "batch_size"),
        },
        only_when={"evaluate.batch_size": "sites.model"},  # errorseq's val predictions
        options=(CONSOLE,),
        genome=True,
    ),
    Stage(
        "site_summary",
        "The report's site-calls page from site_metrics.json.",
        inputs=(Input("metrics", "site_metrics.json (site_calls)"),),
        outputs=(Output("html", "site_summary.html (the report shows it)"),),
    ),
    Stage(
        "target_regions",
        "calling.start regions: the spans to score (regions.parquet).",
        inputs=(
            Input(
                "regions",
                "calling.regions: a BED of the regions to score (default: every chromosome)",
                required=False,
            ),
        ),
        outputs=(Output("regions", "output: the spans to score (regions.parquet)"),),
        genome=True,
    ),
    Stage(
        "rescore_sites",
        "calling.start regions: another genome's re-scorer applied to the scored regions.",
        inputs=(
            Input("scores", "scores tables (score_base_model's shards)", many=True),
            Input("regions", "the scored regions (target_regions: regions.parquet)"),
            Input("transfer", "sites.transfer: another genome's re-scorer folder"),
        ),
        outputs=(
            Output("calls", "every candidate and its calls (parquet)"),
            Output("bed", "BED of the corrected calls"),
            Output("gff3", "GFF3 of the corrected calls"),
            Output("report", "JSON: no metrics, counts and provenance"),
        ),
        config={"calling": SITE_CALLING, "sites": WHOLE, "evaluate": ("batch_size",)},
        genome=True,
    ),
    Stage(
        "extract",
        "One experiment's labelled windows, split by gene, as windows.parquet.",
        inputs=(
            Input("sequences", "ready-made windows table (sequence, label[, gene_id, id])", required=False),
            Input("calls", "calls table: .tsv/.tsv.gz/.txt/.csv/.parquet", required=False),
            Input(
                "scores",
                "calls mode: the scores tables the calls were made from (profiles)",
                required=False,
                many=True,
            ),
            Input(
                "genes", "genes.parquet (annotate_sites): the spans the scores are read in", required=False
            ),
        ),
        outputs=(Output("windows", "output windows parquet"),),
        config={"experiment": WHOLE, "window": WHOLE, "split": WHOLE},
        genome=True,
        genome_optional=True,  # --sequences: ready-made windows
        per_run=True,
    ),
    Stage(
        "tokenizer",
        "The BPE tokenizer learnt on the training windows (tokenizer.kind bpe).",
        inputs=(Input("windows", "windows parquet (sequence, split)"),),
        outputs=(Output("tokenizer", "output Hugging Face tokenizer directory"),),
        config={"tokenizer": WHOLE, "split": WHOLE},
    ),
    Stage(
        "bucket",
        "Each window's token-length bucket (manifest) and the padding report (summary).",
        inputs=(
            Input("windows", "windows parquet (id, split, label, length, sequence)"),
            Input("tokenizer", "the learnt BPE tokenizer (tokenizer.kind bpe)", required=False),
        ),
        outputs=(Output("manifest", "bucket manifest parquet"), Output("summary", "padding report (JSON)")),
        config={"bucket": WHOLE, "tokenizer": WHOLE, "model": WHOLE},
    ),
    Stage(
        "train",
        "Train the experiment's classifier with torchrun.",
        inputs=(
            RUN_WINDOWS,
            RUN_MANIFEST,
            BUCKET_SUMMARY,
            DEEPSPEED_CONFIG,
            Input("init_encoder", "encoder.pt written by pretrain: start from it", required=False),
        ),
        outputs=(
            Output("weights", "model.pt: the best epoch's plain state dict"),
            Output("config", "model.json"),
            *RUN_OUTPUTS,
        ),
        config={"model": WHOLE, "train": WHOLE},
        optional_config=("cluster",),
        options=RUN_OPTIONS,
        per_run=True,
    ),
    Stage(
        "pretrain",
        "Pretrain the experiment's encoder (pretrain.enabled) with torchrun.",
        inputs=(
            RUN_WINDOWS,
            RUN_MANIFEST,
            BUCKET_SUMMARY,
            DEEPSPEED_CONFIG,
            Input("genome_index", "index.tsv of the indexed genome (pretrain.source genome)", required=False),
        ),
        outputs=(
            Output("weights", "encoder.pt: the encoder's state dict"),
            Output("config", "pretrain.json"),
            *RUN_OUTPUTS,
        ),
        config={"model": WHOLE, "train": WHOLE, "pretrain": WHOLE},
        optional_config=("cluster",),
        options=RUN_OPTIONS,
        per_run=True,
    ),
    Stage(
        "evaluate",
        "Predict the test split, compare the model with its baselines: predictions and metrics.",
        inputs=(RUN_WINDOWS, RUN_MANIFEST, MODEL, MODEL_CONFIG),
        outputs=(Output("predictions", "predictions.parquet"), Output("metrics", "metrics.json")),
        config={"evaluate": WHOLE, "train": WHOLE},
        options=(EXPERIMENT,),
        per_run=True,
    ),
    Stage(
        "plot",
        "One run's plots (artifacts.PLOTS).",
        inputs=(
            Input("predictions", "the test predictions (evaluate)"),
            Input("metrics", "evaluation/metrics.json"),
            Input("steps", "model/steps.jsonl"),
            Input("bucket_summary", "buckets/summary.json"),
            Input("manifest", "the bucket manifest (bucket)"),
        ),
        outputs=(Output("plots", "the PNG files (artifacts.PLOTS), under --out-dir", passed=False),),
        options=(OUT_DIR,),
    ),
    Stage(
        "explain",
        "What the model looks at: attributions, k-mers and their plots.",
        inputs=(Input("windows", "the windows (extract)"), MODEL, MODEL_CONFIG),
        outputs=(
            Output("attribution", "attribution.tsv"),
            Output("kmers", "kmers.tsv"),
            Output("plots", "the explain plots (artifacts.EXPLAIN_PLOTS), under --out-dir", passed=False),
        ),
        config={"explain": WHOLE},
        options=(OUT_DIR, EXPERIMENT),
    ),
    Stage(
        "predict_calls",
        "A trained run's predictions for predict.calls.",
        inputs=(
            Input("calls", "calls table: .tsv/.tsv.gz/.txt/.csv/.parquet"),
            MODEL,
            MODEL_CONFIG,
            Input("metrics", "metrics.json written by evaluate (the threshold)"),
        ),
        outputs=(Output("predictions", "output parquet"),),
        config={"experiment": WHOLE, "predict": WHOLE, "window": WHOLE, "evaluate": WHOLE},
        genome=True,
        per_run=True,
    ),
    Stage(
        "summarize",
        "Every run's model-vs-baselines results in one table, plot and page.",
        inputs=(
            Input("metrics", "each run's evaluation/metrics.json", many=True),
            Input("calls_summary", "make_calls' summary (the pipeline made the calls)", required=False),
        ),
        outputs=(
            Output("table", "summary.tsv (artifacts.summary_fields)"),
            Output("plot", "summary.png"),
            Output("html", "summary.html (the report's front page shows it)"),
            Output("provenance", "provenance.json (needs --provenance)", required=False),
        ),
        config={"experiments": WHOLE, "split": WHOLE, "train": WHOLE},
        optional_config=("experiments",),
        options=(Option("provenance", "JSON: evaluation/provenance.py's workflow_facts"), CONSOLE),
    ),
)

STAGES = {stage.rule: stage for stage in STAGE_LIST}
