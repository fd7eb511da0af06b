"""The `summarize` rule: every run's model-vs-baselines results in one table, plot and page.

`--config` holds the sections experiments, split and train: the runs they make (config/runs.py)
give each metrics file its experiment, fold and seed, and an experiment with several runs its
mean ± sd rows. Without `experiments`, each metrics file is an experiment of its own.
`--provenance` (evaluation/provenance.py's workflow_facts) with `--out-provenance` writes
provenance.json and puts it at the top of summary.html. The answer, a sentence per run
(evaluation/answer.py), goes to the log and to `--console-fd` (the rule's console).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import cast

from workflow_scripts.config.runs import expand_runs
from workflow_scripts.config.sections import add_config_argument, parse_rule_config
from workflow_scripts.errors import InputError, run_cli
from workflow_scripts.evaluation.provenance import provenance
from workflow_scripts.evaluation.summary import write_summary

SECTIONS = ("experiments", "split", "train")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--metrics", required=True, nargs="+", help="each run's evaluation/metrics.json")
    parser.add_argument("--out-table", required=True, help="summary.tsv (artifacts.summary_fields)")
    parser.add_argument("--out-plot", required=True, help="summary.png")
    parser.add_argument("--out-html", required=True, help="summary.html (the report's front page shows it)")
    parser.add_argument("--provenance", help="JSON: evaluation/provenance.py's workflow_facts")
    parser.add_argument("--calls-summary", help="results/calls/summary.json (the pipeline made the calls)")
    parser.add_argument("--out-provenance", help="provenance.json (needs --provenance)")
    parser.add_argument("--console-fd", type=int, help="a file descriptor for the answer (the rule: 3)")
    add_config_argument(parser, *SECTIONS)
    return parser.parse_args(argv)


def provenance_of(args: argparse.Namespace) -> tuple[dict, str] | None:
    if args.out_provenance is None:
        return None
    if args.provenance is None:
        raise InputError("--provenance", "(json)", "needed with --out-provenance")
    try:
        facts = json.loads(args.provenance)
    except json.JSONDecodeError as error:
        raise InputError("--provenance", "(json)", f"not valid JSON: {error.msg}") from None
    return provenance(facts, args.calls_summary), args.out_provenance


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
    args = parse_args(argv)
    sections = parse_rule_config(args.config, required=("split", "train"))
    runs = {}
    if "experiments" in sections:
        experiments = cast(list, sections["experiments"])  # the one section that is a list
        runs = expand_runs(experiments, sections["split"], sections["train"])
    summary = write_summary(
        args.metrics, args.out_table, args.out_plot, args.out_html, runs, provenance_of(args)
    )
    sentences = summary.sentences()
    print("\n".join(sentences), file=sys.stderr)
    tell_console(args.console_fd, sentences)


if __name__ == "__main__":
    run_cli(main)
