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
import sys
import time

import polars as pl

from workflow_scripts.calling.contract import GENE_COLUMNS
from workflow_scripts.calling.scores import ScoreTables
from workflow_scripts.config.sections import add_config_argument
from workflow_scripts.config.types import ExperimentSection, WindowSection, parse_typed_config
from workflow_scripts.data.fasta import open_genome
from workflow_scripts.data.genome import Genome
from workflow_scripts.data.quality import check_splits, notes, summary_line, write_windows
from workflow_scripts.data.score_profiles import with_score_profiles
from workflow_scripts.data.tables import read_table
from workflow_scripts.data.windows import (
    drop_all_n,
    split_windows,
    windows_from_calls,
    windows_from_sequences,
)
from workflow_scripts.errors import InputError, run_cli

SECTIONS = ("experiment", "window", "split")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--genome", help="genome index directory (index_genome) or a FASTA file")
    parser.add_argument("--calls", help="calls table: .tsv/.tsv.gz/.txt/.csv/.parquet")
    parser.add_argument("--sequences", help="ready-made windows table (sequence, label[, gene_id, id])")
    parser.add_argument(
        "--scores", nargs="+", help="calls mode: the scores tables the calls were made from (profiles)"
    )
    parser.add_argument("--genes", help="genes.parquet (annotate_sites): the spans the scores are read in")
    parser.add_argument("--out", required=True, help="output windows parquet")
    add_config_argument(parser, *SECTIONS)
    return parser.parse_args(argv)


def check_inputs(args: argparse.Namespace) -> None:
    if args.sequences and (args.calls or args.genome):
        raise InputError(
            "command line", "--sequences", "use either --sequences or --genome with --calls, not both"
        )
    if not args.sequences and not (args.calls and args.genome):
        raise InputError("command line", "--calls/--genome", "both are required unless --sequences is given")
    if bool(args.scores) != bool(args.genes) or (args.scores and args.sequences):
        raise InputError("command line", "--scores/--genes", "both together, and only with --calls")


def with_profiles(frame: pl.DataFrame, args: argparse.Namespace, genome: Genome, flank: int) -> pl.DataFrame:
    """The windows with their score profiles (calls mode with --scores), logged."""
    genes = read_table(args.genes, required=GENE_COLUMNS).with_columns(pl.col("start", "end").cast(pl.Int64))
    tables = ScoreTables(args.scores, genes, genome.chrom_lengths())
    parts = tables.by_chromosome(set(frame["chrom"].unique().to_list()))
    frame, report = with_score_profiles(frame, parts, genome.chrom_lengths(), flank)
    share = "no bases" if report["scored_share"] is None else f"{report['scored_share']:.1%}"
    log(
        f"extract: score profiles from {len(tables.paths)} scores table(s): {report['scored_bases']:,} of "
        f"{report['bases']:,} window bases scored ({share}); the rest are 0.0 (outside the genes' spans "
        "on the window's strand, or past a chromosome end)"
    )
    return frame


def labelled_windows(
    args: argparse.Namespace, experiment: ExperimentSection, window: WindowSection, genome: Genome | None
) -> tuple[pl.DataFrame, dict, dict]:
    """The windows, the names of the error and correct classes, and the windows' shape (calls mode)."""
    if args.sequences:
        return (
            windows_from_sequences(args.sequences, experiment.name),
            {"error": "label 1", "correct": "label 0"},
            {},
        )
    assert genome is not None  # check_inputs: calls mode has --genome
    frame = windows_from_calls(genome, args.calls, experiment, window)
    flank = window.flank
    return (
        frame,
        experiment.labels(),
        {"flank": flank, "length": 2 * flank + 1, "site_offset": flank},
    )


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    check_inputs(args)
    sections = parse_typed_config(args.config, required=SECTIONS)
    experiment: ExperimentSection = sections["experiment"]
    name, began = experiment.name, time.perf_counter()
    genome = open_genome(args.genome) if args.genome else None
    frame, class_names, window = labelled_windows(args, experiment, sections["window"], genome)
    frame, all_n = drop_all_n(frame)
    if args.scores and genome is not None:
        frame = with_profiles(frame, args, genome, sections["window"].flank)
    source = args.sequences or args.calls
    frame = split_windows(frame, sections["split"], experiment.fold, source)
    warnings = check_splits(frame, source, name, class_names, all_n)
    if all_n:
        log(f"extract: {all_n} windows without a single A, C, G or T (all N) dropped")
    for warning in warnings:
        log(f"extract: warning: {warning}")
    labels = experiment.labels()
    write_windows(frame, args.out, notes(frame, window, labels, {"all_n_windows": all_n}, warnings))
    log(summary_line(frame, name, time.perf_counter() - began))


def log(line: str) -> None:
    print(line, file=sys.stderr)


if __name__ == "__main__":
    run_cli(main)
