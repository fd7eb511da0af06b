"""The `extract` rule: one experiment's labelled windows, split by gene, as windows.parquet.

Either `--genome` (a genome index directory, or a FASTA parsed on the fly) with `--calls`, or
`--sequences` (a table of ready-made windows). `--config` holds the sections experiment (the
run's `experiments:` entry: name, error_label, correct_label, and fold, the fold it tests, when
split.folds > 1: config/runs.py), window and split (by gene, k-fold or chromosome: data/splits.py).

The log says how many windows were dropped for being all N and warns about splits with few
windows of a class (data/quality.py); windows.parquet keeps the same in its notes. A split
without one of the classes is refused.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import polars as pl

from workflow_scripts.calling.chromosome_windows import drop_all_n_calls, write_call_windows
from workflow_scripts.calling.contract import GENE_COLUMNS
from workflow_scripts.calling.scores import ScoreTables
from workflow_scripts.config.stage import StageConfig
from workflow_scripts.config.stages.extract import STAGE
from workflow_scripts.config.types import ExperimentSection
from workflow_scripts.data.fasta import open_genome
from workflow_scripts.data.genome import Genome
from workflow_scripts.data.quality import check_splits, notes, summary_line, write_windows
from workflow_scripts.data.tables import read_table
from workflow_scripts.data.windows import (
    drop_all_n,
    experiment_calls,
    split_windows,
    windows_from_sequences,
    with_splits,
)
from workflow_scripts.errors import InputError, run_cli


def check_inputs(paths: argparse.Namespace) -> None:
    if paths.sequences and (paths.calls or paths.genome):
        raise InputError(
            "command line", "--sequences", "use either --sequences or --genome with --calls, not both"
        )
    if not paths.sequences and not (paths.calls and paths.genome):
        raise InputError("command line", "--calls/--genome", "both are required unless --sequences is given")
    if bool(paths.scores) != bool(paths.genes) or (paths.scores and paths.sequences):
        raise InputError("command line", "--scores/--genes", "both together, and only with --calls")


def score_tables(paths: argparse.Namespace, genome: Genome) -> ScoreTables | None:
    """The scores tables behind the calls (calls mode with --scores), read one chromosome at a time."""
    if not paths.scores:
        return None
    genes = read_table(paths.genes, required=GENE_COLUMNS).with_columns(pl.col("start", "end").cast(pl.Int64))
    return ScoreTables(paths.scores, genes, genome.chrom_lengths())


def log_profiles(report: dict, tables: ScoreTables) -> None:
    share = "no bases" if report["scored_share"] is None else f"{report['scored_share']:.1%}"
    log(
        f"extract: score profiles from {len(tables.paths)} scores table(s): {report['scored_bases']:,} of "
        f"{report['bases']:,} window bases scored ({share}); the rest are 0.0 (outside the genes' spans "
        "on the window's strand, or past a chromosome end)"
    )


def checked(
    frame: pl.DataFrame, source, experiment: ExperimentSection, class_names: dict, all_n: int
) -> list:
    """The split's checks (a split without a class stops here), logged; the warnings."""
    warnings = check_splits(frame, source, experiment.name, class_names, all_n)
    if all_n:
        log(f"extract: {all_n} windows without a single A, C, G or T (all N) dropped")
    for warning in warnings:
        log(f"extract: warning: {warning}")
    return warnings


def extract_sequences(paths: argparse.Namespace, cfg: StageConfig) -> pl.DataFrame:
    """Sequences mode: the user's ready-made windows, checked and split, written whole."""
    experiment: ExperimentSection = cfg.experiment
    frame, all_n = drop_all_n(windows_from_sequences(paths.sequences, experiment.name))
    frame = split_windows(frame, cfg.split, experiment.fold, paths.sequences)
    class_names = {"error": "label 1", "correct": "label 0"}
    warnings = checked(frame, paths.sequences, experiment, class_names, all_n)
    write_windows(
        frame, paths.out_windows, notes(frame, {}, experiment.labels(), {"all_n_windows": all_n}, warnings)
    )
    return frame


def extract_calls(paths: argparse.Namespace, cfg: StageConfig) -> pl.DataFrame:
    """Calls mode: the experiment's calls split, then their windows cut and written one chromosome
    at a time (calling/chromosome_windows.py); the split calls."""
    experiment: ExperimentSection = cfg.experiment
    flank = cfg.window.flank
    genome = open_genome(paths.genome)
    frame = experiment_calls(genome, paths.calls, experiment)
    frame, all_n = drop_all_n_calls(genome, frame, flank)
    frame = with_splits(frame, cfg.split, experiment.fold, paths.calls)
    warnings = checked(frame, paths.calls, experiment, experiment.labels(), all_n)
    shape = {"flank": flank, "length": 2 * flank + 1, "site_offset": flank}
    extract_notes = notes(frame, shape, experiment.labels(), {"all_n_windows": all_n}, warnings)
    tables = score_tables(paths, genome)
    report = write_call_windows(genome, frame, tables, flank, paths.out_windows, json.dumps(extract_notes))
    if tables is not None:
        log_profiles(report, tables)
    return frame


def main(argv: list[str] | None = None) -> None:
    paths, cfg = STAGE.parse(argv)
    check_inputs(paths)
    began = time.perf_counter()
    frame = extract_sequences(paths, cfg) if paths.sequences else extract_calls(paths, cfg)
    log(summary_line(frame, cfg.experiment.name, time.perf_counter() - began))


def log(line: str) -> None:
    print(line, file=sys.stderr)


if __name__ == "__main__":
    run_cli(main)
