"""The `site_windows` rule (sites.model): site_calls' candidates as windows, one windows.parquet
per fold, for errorseq's deep model to re-score (sites/candidate_windows.py; docs/sites.md).

`--config` holds calling (threshold, consensus_window), sites (floor, peak_radius, folds, seed:
what the candidates and their folds depend on), window (flank) and split (fractions: train : val).
`--out-windows` names the windows of folds 1..sites.folds, in that order. `--console-fd`: progress
on Snakemake's console (workflow_scripts/progress.py).
"""

from __future__ import annotations

import argparse
import sys
import time

from workflow_scripts import layout
from workflow_scripts.config.sections import add_config_argument
from workflow_scripts.config.types import WindowSection, parse_typed_config
from workflow_scripts.data.quality import check_splits, notes, summary_line, write_windows
from workflow_scripts.errors import InputError, run_cli
from workflow_scripts.progress import Console, Progress, add_console_argument, announce
from workflow_scripts.sites.candidate_windows import LABELS, fold_windows
from workflow_scripts.sites.inputs import folded_candidates, profiled_windows, read_site_inputs
from workflow_scripts.sites.settings import SiteSettings

SECTIONS = ("calling", "sites", "window", "split")


def add_site_input_arguments(parser: argparse.ArgumentParser) -> None:
    """The inputs site_windows and site_calls both read: scores, sites, genes, clusters, genome."""
    parser.add_argument("--scores", required=True, nargs="+", help="scores tables: one, or every shard's")
    parser.add_argument("--sites", required=True, help="sites.parquet (annotate_sites)")
    parser.add_argument("--genes", required=True, help="genes.parquet (annotate_sites)")
    parser.add_argument("--gene-clusters", required=True, help="gene_clusters.parquet (cluster_genes)")
    parser.add_argument(
        "--genome", required=True, help="genome index directory (index_genome) or a FASTA file"
    )


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_site_input_arguments(parser)
    parser.add_argument(
        "--out-windows", required=True, nargs="+", help="windows.parquet of folds 1..sites.folds"
    )
    add_console_argument(parser)
    add_config_argument(parser, *SECTIONS)
    return parser.parse_args(argv)


def log(line: str) -> None:
    print(f"site_windows: {line}", file=sys.stderr, flush=True)


def note(console: Console, line: str) -> None:
    """A stage's line: to the log, and to the console where a line is due."""
    log(line)
    console.progress(lambda: f"site_windows: {line}")


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    config = parse_typed_config(args.config, required=SECTIONS)
    settings = SiteSettings.from_config(config["calling"], config["sites"])
    window: WindowSection = config["window"]
    if len(args.out_windows) != settings.folds:
        raise InputError(
            "command line",
            "--out-windows",
            f"{len(args.out_windows)} paths for {settings.folds} folds (sites.folds)",
        )
    console = Console(args.console_fd)
    announce(console, "site_windows", f"the candidates as windows of {settings.folds} folds")
    began, flank = time.perf_counter(), window.flank
    inputs = read_site_inputs(args.scores, args.sites, args.genes, args.gene_clusters, args.genome)
    found = folded_candidates(inputs, settings, progress=lambda line: note(console, line))
    windows, profiles = profiled_windows(found, inputs, flank)
    log(
        f"{windows.height:,} candidate windows of {2 * flank + 1} nt; {profiles['scored_bases']:,} of "
        f"{profiles['bases']:,} window bases scored"
    )
    shape = {"flank": flank, "length": 2 * flank + 1, "site_offset": flank}
    folds = Progress("site_windows", settings.folds, "folds", rate_of="", console=console)
    for fold, path in enumerate(args.out_windows, start=1):
        frame = fold_windows(windows, fold, config["split"].fractions, settings.seed)
        name = layout.site_fold_run(fold)
        warnings = check_splits(frame, path, name, LABELS, 0)
        for warning in warnings:
            log(f"warning: {warning}")
        write_windows(frame, path, notes(frame, shape, LABELS, {"all_n_windows": 0}, warnings))
        log(summary_line(frame, name, time.perf_counter() - began).removeprefix("extract: "))
        folds.advance(1)
    folds.finish()


if __name__ == "__main__":
    run_cli(main)
