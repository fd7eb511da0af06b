"""The `demo_data` rule: write the synthetic demo genome (FASTA) and its splice-site calls (TSV)."""

from __future__ import annotations

import argparse
import sys
import time

from workflow_scripts.config.sections import add_config_argument
from workflow_scripts.config.types import DemoSection, parse_typed_config
from workflow_scripts.data.demo import generate_demo
from workflow_scripts.errors import run_cli


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out-genome", required=True, help="output FASTA (.fa, or .fa.gz for gzip)")
    parser.add_argument("--out-calls", required=True, help="output calls TSV")
    add_config_argument(parser, "demo")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    demo: DemoSection = parse_typed_config(args.config, required=("demo",))["demo"]
    began = time.perf_counter()
    generate_demo(
        args.out_genome,
        args.out_calls,
        seed=demo.seed,
        n_genes=demo.n_genes,
        calls_per_gene=demo.calls_per_gene,
    )
    print(
        f"demo_data: wrote {args.out_genome} and {args.out_calls} in {time.perf_counter() - began:.2f} s",
        file=sys.stderr,
    )


if __name__ == "__main__":
    run_cli(main)
