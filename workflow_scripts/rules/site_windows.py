"""The `site_windows` rule (sites.model): site_calls' candidates as windows, one windows.parquet
per fold, for errorseq's deep model to re-score (sites/candidate_windows.py; docs/sites.md).

`--config` holds calling (threshold, consensus_window), sites (floor, peak_radius, folds, seed:
what the candidates and their folds depend on), window (flank) and split (fractions: train : val).
`--out-windows` names the windows of folds 1..sites.folds, in that order. `--console-fd`: progress
on Snakemake's console (workflow_scripts/progress.py).
"""

from __future__ import annotations

import sys
import time

from workflow_scripts import layout
from workflow_scripts.config.stages.site_windows import STAGE
from workflow_scripts.config.types import WindowSection, complete_typed_section
from workflow_scripts.data.quality import check_splits, notes, summary_line, write_windows
from workflow_scripts.errors import InputError, run_cli
from workflow_scripts.progress import Console, Progress, announce
from workflow_scripts.sites.candidate_windows import LABELS, fold_windows
from workflow_scripts.sites.inputs import folded_candidates, profiled_windows, read_site_inputs
from workflow_scripts.sites.settings import SiteSettings


def log(line: str) -> None:
    print(f"site_windows: {line}", file=sys.stderr, flush=True)


def note(console: Console, line: str) -> None:
    """A stage's line: to the log, and to the console where a line is due."""
    log(line)
    console.progress(lambda: f"site_windows: {line}")


def main(argv: list[str] | None = None) -> None:
    paths, cfg = STAGE.parse(argv)
    # SiteSettings wants every sites key: those site_windows does not declare (the tree, the
    # bootstrap, sites.flank's profile features) are the schema's defaults, and no window depends on them
    sites = complete_typed_section("sites", cfg.completed("sites"))
    settings = SiteSettings.from_config(cfg.calling, sites)
    window: WindowSection = cfg.window
    if len(paths.out_windows) != settings.folds:
        raise InputError(
            "command line",
            "--out-windows",
            f"{len(paths.out_windows)} paths for {settings.folds} folds (sites.folds)",
        )
    console = Console(paths.console_fd)
    announce(console, "site_windows", f"the candidates as windows of {settings.folds} folds")
    began, flank = time.perf_counter(), window.flank
    inputs = read_site_inputs(
        paths.scores, paths.sites, paths.genes, paths.gene_clusters, paths.genome, paths.regions
    )
    found = folded_candidates(inputs, settings, progress=lambda line: note(console, line))
    windows, profiles = profiled_windows(found, inputs, flank)
    log(
        f"{windows.height:,} candidate windows of {2 * flank + 1} nt; {profiles['scored_bases']:,} of "
        f"{profiles['bases']:,} window bases scored"
    )
    shape = {"flank": flank, "length": 2 * flank + 1, "site_offset": flank}
    folds = Progress("site_windows", settings.folds, "folds", rate_of="", console=console)
    for fold, path in enumerate(paths.out_windows, start=1):
        frame = fold_windows(windows, fold, cfg.split.fractions, settings.seed)
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
