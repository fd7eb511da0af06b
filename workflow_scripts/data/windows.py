"""Build one experiment's labelled window table (error vs correct calls): the extract rule.

Calls mode (`experiment_calls`, then `call_windows` one chromosome at a time in
calling/chromosome_windows.py): reads and checks the calls table (call_table.py), labels
`pred_type == error_label` as 1 and `== correct_label` as 0 (other rows are dropped), and cuts a
window of exactly 2*flank+1 nt around each site, the site at index flank (`site_offset`),
minus-strand windows reverse-complemented.

Where a window reaches past its gene span it takes the flank from the genome there (the
neighbouring intergenic or gene sequence, as the base model saw it); only past a chromosome end
is it padded with N. So every window has one length and the site one place: a window's shape
says nothing about its label. (Clipping windows to the gene span made error windows shorter, and
window length alone ranked FP above TP with ROC-AUC 0.59 on real data. Padding the outside of
the gene with N instead would keep the length but leak the same distance to the gene edge
through the count of N, so errorseq does not offer it.)

Sequences mode (`windows_from_sequences`): takes ready-made windows with columns `sequence` and
`label` (0 = correct, 1 = error; integers or the strings "0"/"1") and optional `gene_id` and
`id`. Sequences are upper-cased and must be non-empty ACGTN. Without `gene_id`, each row is its
own split group (its gene_id is set to its id). Without `id`, ids are `{experiment}:{row}`.

Both modes then drop windows without a single A, C, G or T (nothing to learn from; counted),
apply the same split (`split_windows`: by gene, k-fold or chromosome, data/splits.py) and check
that every split holds both classes (quality.py). The table has the columns id, gene_id, split, label (Int8), sequence, length
(Int32), in calls mode site_offset (Int32) and, after them, every other column of the input
table in its order (calls: chrom, position, strand, splice_type, pred_type, score, ...), and last,
when the extract rule is given the scores tables behind the calls, the base model's score profiles
donor_scores and acceptor_scores (score_profiles.py).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

from workflow_scripts.config.types import ExperimentSection, SplitSection, WindowSection
from workflow_scripts.data.call_table import CHROM_INDEX, load_calls, read_rows
from workflow_scripts.data.calls import INTERNAL_PREFIX, check_sequences_header
from workflow_scripts.data.genome import Genome
from workflow_scripts.data.splits import assign_splits
from workflow_scripts.data.tables import ROW, fail_on_first
from workflow_scripts.errors import InputError

OUTPUT_COLUMNS = ("id", "gene_id", "split", "label", "sequence", "length")
SITE_OFFSET = "site_offset"


def label_rows(
    frame: pl.DataFrame, experiment: str, error_label: str, correct_label: str, path
) -> pl.DataFrame:
    """Keep error/correct rows, label 1/0; both classes must be present."""
    frame = frame.filter(pl.col("pred_type").is_in([error_label, correct_label]))
    frame = frame.with_columns((pl.col("pred_type") == error_label).cast(pl.Int8).alias("label"))
    require_both_classes(frame, experiment, path, error_label, correct_label)
    return frame


def require_both_classes(
    frame: pl.DataFrame, experiment, path, error_name="label 1", correct_name="label 0"
) -> None:
    for value, name, role in ((1, error_name, "error"), (0, correct_name, "correct")):
        if frame.filter(pl.col("label") == value).height == 0:
            raise InputError(
                path, f"experiment '{experiment}'", f"no {name} rows ({role} class) in {Path(path).name}"
            )


def experiment_calls(genome: Genome, calls_path, experiment: ExperimentSection) -> pl.DataFrame:
    """The checked calls of one experiment (an `experiments:` entry), labelled, with their ids;
    no sequences yet (extract cuts them a chromosome at a time: calling/chromosome_windows.py)."""
    name = experiment.name
    frame = label_rows(
        load_calls(calls_path, genome), name, experiment.error_label, experiment.correct_label, calls_path
    )
    return frame.with_columns((pl.lit(f"{name}:") + pl.col(ROW).cast(pl.String)).alias("id"))


def windows_from_calls(
    genome: Genome, calls_path, experiment: ExperimentSection, window: WindowSection
) -> pl.DataFrame:
    """Labelled windows of one experiment around its calls, all at once."""
    frame = experiment_calls(genome, calls_path, experiment)
    return frame.with_columns(*call_windows(genome, frame, window.flank))


def call_windows(genome: Genome, frame: pl.DataFrame, flank: int) -> tuple[pl.Series, pl.Series, pl.Series]:
    """sequence, length and site_offset of the calls in `frame` (checked: CHROM_INDEX, 1-based
    position, strand): 2*flank+1 nt centred on each site, in the strand's direction. The one
    extraction that extract and predict (inference/) share."""
    chrom_length = genome.lengths[frame[CHROM_INDEX].to_numpy()]
    sequences = genome.centred_windows(
        frame[CHROM_INDEX].to_numpy(),
        frame["position"].to_numpy() - 1,
        flank,
        np.zeros(frame.height, dtype=np.int64),
        chrom_length,
        (frame["strand"] == "-").to_numpy(),
    )
    return (
        sequences,
        pl.repeat(2 * flank + 1, frame.height, dtype=pl.Int32, eager=True).alias("length"),
        pl.repeat(flank, frame.height, dtype=pl.Int32, eager=True).alias(SITE_OFFSET),
    )


def windows_from_sequences(path, experiment: str) -> pl.DataFrame:
    """Validate a user table of ready-made windows (see module docstring)."""
    frame = read_rows(path, check_sequences_header)
    frame = frame.with_columns(pl.col("sequence").cast(pl.String).str.strip_chars().str.to_uppercase())
    fail_on_first(
        frame, pl.col("sequence").is_null() | (pl.col("sequence") == ""), path, "sequence", "empty sequence"
    )
    fail_on_first(
        frame,
        ~pl.col("sequence").str.contains(r"^[ACGTN]+$"),
        path,
        "sequence",
        "sequence has characters other than A, C, G, T, N",
    )
    label_text = pl.col("label").cast(pl.String).str.strip_chars()
    fail_on_first(
        frame,
        label_text.is_null() | ~label_text.is_in(["0", "1"]),
        path,
        "label",
        "label must be 0 (correct) or 1 (error)",
    )
    frame = frame.with_columns(label_text.cast(pl.Int8).alias("label"))
    require_both_classes(frame, experiment, path)
    frame = with_ids(frame, experiment, path)
    return frame.with_columns(pl.col("sequence").str.len_bytes().cast(pl.Int32).alias("length"))


def with_ids(frame: pl.DataFrame, experiment, path) -> pl.DataFrame:
    if "id" in frame.columns:
        frame = frame.with_columns(pl.col("id").cast(pl.String))
        fail_on_first(frame, pl.col("id").is_null(), path, "id", "missing id")
        fail_on_first(
            frame, ~pl.col("id").is_first_distinct(), path, "id", "duplicate id: an earlier row has it"
        )
    else:
        frame = frame.with_columns((pl.lit(f"{experiment}:") + pl.col(ROW).cast(pl.String)).alias("id"))
    if "gene_id" in frame.columns:
        frame = frame.with_columns(pl.col("gene_id").cast(pl.String))
        fail_on_first(frame, pl.col("gene_id").is_null(), path, "gene_id", "missing gene_id")
    else:
        frame = frame.with_columns(pl.col("id").alias("gene_id"))
    return frame


def drop_all_n(frame: pl.DataFrame) -> tuple[pl.DataFrame, int]:
    """The windows holding at least one A, C, G or T; how many were dropped."""
    kept = frame.filter(pl.col("sequence").str.contains("[ACGT]"))
    return kept, frame.height - kept.height


def with_splits(
    frame: pl.DataFrame, split: SplitSection, fold: int | None = None, source="windows"
) -> pl.DataFrame:
    """`frame` with its `split` column, by the `split:` config section (data/splits.py; `fold` is
    the run's test fold with split.folds > 1, `source` names the input in errors)."""
    return frame.with_columns(assign_splits(frame, split, fold, source).alias("split"))


def in_output_order(frame: pl.DataFrame) -> pl.DataFrame:
    """The output table's columns: the derived ones first, then the input table's other columns;
    extraction's working columns dropped."""
    first = [*OUTPUT_COLUMNS, *([SITE_OFFSET] if SITE_OFFSET in frame.columns else [])]
    rest = [c for c in frame.columns if c not in first and not c.startswith(INTERNAL_PREFIX)]
    return frame.select(*first, *rest)


def split_windows(
    frame: pl.DataFrame, split: SplitSection, fold: int | None = None, source="windows"
) -> pl.DataFrame:
    """The output table of a whole window table: split (with_splits), in output order."""
    return in_output_order(with_splits(frame, split, fold, source))
