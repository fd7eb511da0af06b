"""The `target_regions` rule (calling.start regions): calling.regions' BED, or every chromosome of
the genome, -> regions.parquet, the spans score_base_model scores (calling/target_regions.py).

`--regions`: the BED (absent: whole chromosomes, both strands). The table has genes.parquet's
columns, so score_base_model and rescore_sites read it as they read genes.
"""

from __future__ import annotations

import argparse
import sys
import time

from workflow_scripts.calling.target_regions import target_regions
from workflow_scripts.config.sections import add_config_argument
from workflow_scripts.data.fasta import open_genome
from workflow_scripts.errors import run_cli
from workflow_scripts.io_utils import write_parquet


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--genome", required=True, help="genome index directory (index_genome) or a FASTA file"
    )
    parser.add_argument(
        "--regions", help="calling.regions: a BED of the regions to score (default: every chromosome)"
    )
    parser.add_argument("--out-regions", required=True, help="output: the spans to score (regions.parquet)")
    add_config_argument(parser)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    began = time.perf_counter()
    genome = open_genome(args.genome)
    table = target_regions(args.regions, genome)
    write_parquet(table, args.out_regions)
    nt = int((table["end"] - table["start"] + 1).sum())
    where = args.regions or f"all {len(genome.names):,} chromosomes"
    print(
        f"target_regions: {table.height:,} regions of {where}, {nt:,} nt to score (each strand counted) "
        f"({time.perf_counter() - began:.1f} s)",
        file=sys.stderr,
    )


if __name__ == "__main__":
    run_cli(main)
