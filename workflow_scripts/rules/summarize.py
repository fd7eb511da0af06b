"""The `summarize` rule: every run's model-vs-baselines results in one table, plot and page.

`--config` holds the sections experiments, split and train: the runs they make (config/runs.py)
give each metrics file its experiment, fold and seed, and an experiment with several runs its
mean ± sd rows. Without `experiments`, each metrics file is an experiment of its own.
`--out-provenance` writes provenance.json (evaluation/provenance.py, from the records of the
declared inputs: the genome's, annotation's and score shards', or the tables given and the weights
that made a scores table, the config files by name and sha256, and calling's settings in `--config`) and puts it at the top of summary.html. The answer, a sentence per run
(evaluation/answer.py), goes to the log and to `--console-fd` (the rule's console).
"""

from __future__ import annotations

import argparse
import os
import sys

from workflow_scripts.config.runs import expand_runs
from workflow_scripts.config.stage import StageConfig
from workflow_scripts.config.stages.summarize import STAGE
from workflow_scripts.errors import run_cli
from workflow_scripts.evaluation.provenance import DeclaredInputs, provenance
from workflow_scripts.evaluation.summary import write_summary


def provenance_of(paths: argparse.Namespace, cfg: StageConfig) -> tuple[dict, str] | None:
    if paths.out_provenance is None:
        return None
    given = DeclaredInputs(
        genome_record=paths.genome_record,
        annotation_summary=paths.annotation_summary,
        shard_records=paths.score_records or (),
        calls=paths.calls,
        scores=paths.scores or (),
        sequences=paths.sequences,
        calls_summary=paths.calls_summary,
        made_by=paths.made_by or (),
        config_files=paths.config_files or (),
    )
    return provenance(given, {"calling": cfg.completed("calling")}), paths.out_provenance


def tell_console(descriptor: int | None, lines: list[str]) -> None:
    """One write of the lines to `descriptor` (Snakemake's stderr: it shares its file offset, so
    a console redirected to a file keeps them); nothing when it is not open (a run by hand)."""
    if descriptor is None:
        return
    try:
        os.write(descriptor, "".join(f"{line}\n" for line in lines).encode())
    except OSError:
        pass


def main(argv: list[str] | None = None) -> None:
    paths, cfg = STAGE.parse(argv)
    runs = {}
    if cfg.experiments is not None:
        runs = expand_runs(cfg.completed("experiments"), cfg.completed("split"), cfg.completed("train"))
    summary = write_summary(
        paths.metrics, paths.out_table, paths.out_plot, paths.out_html, runs, provenance_of(paths, cfg)
    )
    sentences = summary.sentences()
    print("\n".join(sentences), file=sys.stderr)
    tell_console(paths.console_fd, sentences)


if __name__ == "__main__":
    run_cli(main)
