"""What the pipeline's own files hold, declared once for the code that writes and the code that reads.

A writer builds (or checks) its output against these names and a reader reads only these names,
so renaming or adding a field is one edit here. Readers trust what the pipeline wrote: they do not
re-check types or ranges; a file they cannot read at all is still one line naming the file.

    results/<exp>/model/steps.jsonl          STEP_LOG (train and val records), training/telemetry.py
    results/<exp>/evaluation/metrics.json    METRICS_FILE_FIELDS, evaluation/evaluate.py
    results/<exp>/evaluation/predictions.parquet  PREDICTION_COLUMNS, evaluation/evaluate.py
    results/<exp>/buckets/summary.json       BUCKET_SUMMARY_FIELDS, bucketing/assign.py
    results/<exp>/plots/<name>.png           PLOTS, evaluation/plots/
    results/summary/summary.tsv              summary_fields(), evaluation/summary.py
"""

from __future__ import annotations

from dataclasses import dataclass

from workflow_scripts.comparison_fields import BASELINES, MODEL, PREDICTORS
from workflow_scripts.comparison_fields import METRICS as COMPARED_METRICS


@dataclass(frozen=True)
class RecordKind:
    """One kind of line in steps.jsonl: exactly `fields`, numbers, null only where `nullable`."""

    name: str
    fields: tuple[str, ...]
    nullable: tuple[str, ...] = ()

    def check(self, record: dict) -> None:
        """Raise ValueError when a record the pipeline is about to write breaks the contract."""
        if set(record) != set(self.fields):
            missing = sorted(set(self.fields) - set(record))
            extra = sorted(set(record) - set(self.fields))
            raise ValueError(f"steps.jsonl {self.name} record: missing {missing}, undeclared {extra}")
        nulls = [key for key in self.fields if record[key] is None and key not in self.nullable]
        if nulls:
            raise ValueError(f"steps.jsonl {self.name} record: {nulls} must not be null")


# ---- steps.jsonl: one JSON object per line, written by rank 0 of train and pretrain --------------
# `epoch` counts from 1; `step` is the number of optimizer steps done so far (over all epochs).
# A train record covers the steps since the previous one: it is written every
# train.log_every_steps steps and after the last step of every epoch, so the last train record
# of an epoch sits exactly on the epoch boundary. A val record follows each finished epoch
# (none when the validation split is empty), with the step count at that epoch's end.
GPU_MEMORY_FIELDS = ("gpu_allocated_mb", "gpu_reserved_mb", "gpu_peak_mb")  # null on CPU
TRAIN_RECORD = RecordKind(
    name="train",
    fields=(
        "kind",
        "epoch",
        "step",
        "loss",  # mean training loss over the steps since the previous record
        "lr",  # learning rate after this step
        "tokens_per_s",  # real (unpadded) tokens per second, all ranks
        "windows_per_s",  # windows per second, all ranks
        "step_s",  # wall seconds per optimizer step over the steps since the previous record
        "rss_mb",  # rank 0 resident memory
        *GPU_MEMORY_FIELDS,
    ),
    nullable=GPU_MEMORY_FIELDS,
)
VALIDATION_RECORD = RecordKind(
    name="val",
    fields=("kind", "epoch", "step", "val_loss", "val_accuracy", "val_roc_auc"),
    nullable=("val_roc_auc",),  # one class in the split, or masked-LM pretraining
)
STEP_LOG = {kind.name: kind for kind in (TRAIN_RECORD, VALIDATION_RECORD)}


def check_step_record(record: dict) -> None:
    """What telemetry calls before it writes a line: a known kind with exactly its fields."""
    kind = STEP_LOG.get(str(record.get("kind")))
    if kind is None:
        raise ValueError(
            f"steps.jsonl: unknown record kind {record.get('kind')!r} (known: {sorted(STEP_LOG)})"
        )
    kind.check(record)


# ---- metrics.json (evaluate) -----------------------------------------------------------------------
# A metric whose denominator is zero (e.g. precision with nothing predicted positive) or that needs
# both classes (roc_auc, pr_auc) is null, never 0.0: overall and in every per-bucket entry.
CONFUSION_FIELDS = ("tp", "fp", "tn", "fn")
METRIC_FIELDS = (
    "n",
    "n_positive",
    "n_negative",
    "threshold",
    "accuracy",
    "precision",
    "recall",
    "f1",
    "mcc",
    "roc_auc",
    "pr_auc",
    "confusion",
)
NULLABLE_METRICS = ("precision", "recall", "f1", "mcc", "roc_auc", "pr_auc")
PER_BUCKET_FIELDS = ("bucket", *METRIC_FIELDS)
# threshold_choice: how `threshold` was set (evaluation/threshold.py). mode "fixed" (the config's
# number) or "auto" (criterion, e.g. "f1", maximised on `split` "val": n and n_positive are its
# windows, criterion_value the criterion there at the chosen threshold); reason: why it fell back,
# null otherwise. Fields a mode does not use are null.
THRESHOLD_CHOICE_FIELDS = (
    "mode",
    "threshold",
    "criterion",
    "split",
    "n",
    "n_positive",
    "criterion_value",
    "reason",
    "flagged_share",  # of the validation windows at or above the threshold (None when fixed)
    "warning",  # set when the chosen cut flags most validation windows
)
# comparison: the model against its baselines on the same test genes, the layout declared in
# comparison_fields.py (ComparisonReport: intervals, paired differences, a verdict per
# baseline and metric, overall and per splice type).
METRICS_FILE_FIELDS = ("experiment", "split", *METRIC_FIELDS, "per_bucket", "threshold_choice", "comparison")
EVALUATED_SPLIT = "test"

# ---- predictions.parquet (evaluate): one row per window of the evaluated split -------------------
# These columns first, then every windows.parquet column but PREDICTION_DROPPED_WINDOW_COLUMNS (the
# call columns as extract wrote them: split, chrom, position, strand, splice_type, pred_type,
# score, site_offset, ... where the windows have them), then one score column per scored baseline,
# BASELINE_SCORE_PREFIX + its name (higher = more likely an error; see comparison_fields).
PREDICTION_COLUMNS = ("id", "gene_id", "label", "prob", "pred", "bucket", "length")
# The window's inputs stay in windows.parquet (join on id): the sequence, and the base model's score
# profiles along it (calling/score_profiles.py; 2 values per base, the bulk of the table).
PREDICTION_DROPPED_WINDOW_COLUMNS = ("sequence", "donor_scores", "acceptor_scores")
BASELINE_SCORE_PREFIX = "baseline_"

# ---- buckets/summary.json (bucket) ----------------------------------------------------------------
BUCKET_SUMMARY_FIELDS = (
    "tokenizer",
    "boundaries",
    "boundaries_mode",
    "batch_sizes",
    "max_tokens_per_batch",
    "sort_window",
    "max_length",
    "n_truncated",
    "buckets",
    "edge_efficiency",
    "padding_efficiency",
)
BUCKET_ROW_FIELDS = ("bucket", "lower", "upper", "count", "batch_size", "max_batch_tokens", "count_by_split")
PADDING_EFFICIENCY_FIELDS = ("plan", "pad_to_max", "random_dynamic", "group_by_length")
# buckets/manifest.parquet columns the plots read (the bucket rule writes more)
MANIFEST_PLOT_COLUMNS = ("label", "token_length")

# ---- model/model.json, pretrain/pretrain.json (train, pretrain) -----------------------------------
WEIGHTS_DIGEST_FIELD = "weights_sha256"  # sha256 of model.pt / encoder.pt as written; evaluate checks it
# The calls columns a model reads besides the window's sequence (e.g. ["score"] for a model given
# the base score); absent = the sequence only. predict refuses a calls table without them.
MODEL_INPUT_COLUMNS_FIELD = "input_columns"
# The windows' per-base score columns a model takes as input channels beside the sequence
# (["donor_scores", "acceptor_scores"], models/score_channels.py); absent or [] = none. evaluate,
# explain and predict refuse windows or calls without them.
SCORE_CHANNELS_FIELD = "score_channels"
# What predict must feed the model the way it was trained (training/trained_on.py checks them):
# the window extract cut ({"flank", "length", "site_offset"}; {} for a sequences table), the
# experiment's class labels ({"error": "FP", "correct": "TP"}) and the sha256 of the tokenizer's
# vocabulary (tokenization/tokenizers.tokenizer_digest), beside "experiment" and "tokenizer".
WINDOW_FIELD = "window"
LABELS_FIELD = "labels"
TOKENIZER_DIGEST_FIELD = "tokenizer_sha256"

# ---- predictions/<name>.parquet (predict_calls): one row per input call, in the input's order ----
# Every column of the calls table, then these; predicted_error = p_error >= the experiment's
# threshold (metrics.json threshold_choice), recorded with the experiment in the file's metadata.
NEW_CALL_PREDICTION_COLUMNS = ("p_error", "predicted_error")

# ---- explain/ (explain): what the model attends to, and the k-mers that separate the classes ------
# attribution.tsv: one row per splice_type (or "all"), class (error/correct) and position relative
# to the site; kmers.tsv: one row per k-mer, most enriched in error windows first.
ATTRIBUTION_COLUMNS = (
    "splice_type",
    "class",
    "position",
    "importance",
    "importance_se",  # standard error of the mean over the windows (0 where only one reaches)
    "A",
    "C",
    "G",
    "T",
    "n_windows",
    # the mean attribution of the base model's score at that position, per score channel
    # (inference/channel_attribution.py); empty without score channels or with mutagenesis
    "donor_scores",
    "acceptor_scores",
)
KMER_COLUMNS = (
    "kmer",
    "error_windows",
    "correct_windows",
    "error_fraction",
    "correct_fraction",
    "odds_ratio",
    "p_value",
    "q_value",
)
EXPLAIN_PLOTS = ("position_importance", "sequence_logo", "kmer_enrichment")

# ---- plots/<name>.png (plot) ------------------------------------------------------------------------
PLOTS = (
    "roc",
    "precision_recall",
    "model_vs_baselines",
    "confusion_matrix",
    "training_curves",
    "length_histogram",
)


def plot_file_name(name: str) -> str:
    return f"{name}.png"


# ---- summary/summary.tsv (summarize): one row per run, its overall test windows ------------------
# A run is an experiment, or one of its folds (split.folds) or seeds (train.repeats): config/runs.py.
# Identity: `experiment` (the run's name, results/<run>/), `group` (its experiments: entry), `fold`
# (1..k; empty with one fold), `seed` (the run's train.seed), `statistic` (SUMMARY_RUN) and `runs` (1).
# Beside them the test metrics at the threshold: for every predictor p (the model and each baseline)
# and metric m (roc_auc, pr_auc) the estimate `p_m` and its 95% interval `p_m_low`, `p_m_high`; for
# every baseline b the paired difference `model_minus_b_m` (+ _low, _high) and `verdict_b_m`
# (better / not better / worse). A baseline that could not be scored: empty cells.
# `matched_by_design`: the baselines the run's classes are matched on by design, comma-separated
# (FN vs decoy TN: base_score,base_score_type,dinucleotide; beating them is true by construction,
# evaluation/by_design.py); empty otherwise.
# After the runs of an experiment with more than one run: a SUMMARY_MEAN and a SUMMARY_SD row
# (`experiment` = `group` = the experiment, `runs` = how many), filling summary_aggregated_fields()
# only: the mean and the sample standard deviation (n - 1) over the runs that have a value.
SUMMARY_ID_FIELDS = ("experiment", "group", "fold", "seed", "statistic", "runs")
SUMMARY_RUN, SUMMARY_MEAN, SUMMARY_SD = "run", "mean", "sd"
SUMMARY_TEST_FIELDS = (
    "n",
    "n_positive",
    "n_genes",
    "threshold",
    "threshold_mode",
    "precision",
    "recall",
    "f1",
    "mcc",
)
SUMMARY_NOTE_FIELDS = ("matched_by_design",)
SUMMARY_INTERVAL_SUFFIXES = ("", "_low", "_high")


def summary_fields() -> tuple[str, ...]:
    """Every column of summary.tsv, in order."""
    predictors = tuple(
        f"{p}_{m}{suffix}"
        for p in PREDICTORS
        for m in COMPARED_METRICS
        for suffix in SUMMARY_INTERVAL_SUFFIXES
    )
    differences = tuple(
        name
        for b in BASELINES
        for m in COMPARED_METRICS
        for name in (
            *(f"{MODEL}_minus_{b}_{m}{suffix}" for suffix in SUMMARY_INTERVAL_SUFFIXES),
            f"verdict_{b}_{m}",
        )
    )
    return (*SUMMARY_ID_FIELDS, *SUMMARY_TEST_FIELDS, *SUMMARY_NOTE_FIELDS, *predictors, *differences)


def summary_aggregated_fields() -> tuple[str, ...]:
    """The columns a mean or sd row fills: every point estimate (no interval, no verdict)."""
    estimates = tuple(f"{p}_{m}" for p in PREDICTORS for m in COMPARED_METRICS)
    differences = tuple(f"{MODEL}_minus_{b}_{m}" for b in BASELINES for m in COMPARED_METRICS)
    return ("precision", "recall", "f1", "mcc", *estimates, *differences)
