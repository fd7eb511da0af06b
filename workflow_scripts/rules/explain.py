"""The `explain` rule: what one experiment's model learnt. Attribution over the test windows
aligned on the splice site (attribution.tsv), k-mer enrichment of error against correct windows
(kmers.tsv), and the plots artifacts.EXPLAIN_PLOTS. `--config` holds the section explain."""

from __future__ import annotations

import argparse

from workflow_scripts.config.sections import add_config_argument, parse_rule_config
from workflow_scripts.config.types import typed_section
from workflow_scripts.errors import run_cli
from workflow_scripts.inference.explain import ExplainPaths, explain

SECTIONS = ("explain",)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--windows", required=True, help="windows.parquet written by extract")
    parser.add_argument("--model", required=True, help="model.pt written by train")
    parser.add_argument("--model-config", required=True, help="model.json written by train")
    parser.add_argument("--experiment", required=True, help="the experiment wildcard")
    parser.add_argument("--out-attribution", required=True, help="attribution.tsv")
    parser.add_argument("--out-kmers", required=True, help="kmers.tsv")
    parser.add_argument("--out-dir", required=True, help="folder of the explain plots")
    add_config_argument(parser, *SECTIONS)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    sections = parse_rule_config(args.config, required=SECTIONS)
    paths = ExplainPaths(
        args.windows, args.model, args.model_config, args.out_attribution, args.out_kmers, args.out_dir
    )
    explain(paths, typed_section("explain", sections["explain"]), args.experiment)


if __name__ == "__main__":
    run_cli(main)
