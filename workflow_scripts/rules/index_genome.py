"""The `index_genome` rule: parse the genome FASTA once into sequence.npy + index.tsv.

Every experiment then memory-maps the genome (`Genome.open_cached` on their directory) instead
of parsing the FASTA again. No config: the FASTA is the input.
"""

from __future__ import annotations

import argparse
import sys
import time

from workflow_scripts.data.fasta import load_fasta
from workflow_scripts.errors import run_cli


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fasta", required=True, help="plain, gzip or bgzip FASTA")
    parser.add_argument("--sequence", required=True, help="output: the bases (sequence.npy)")
    parser.add_argument("--index", required=True, help="output: name, length, offset per chromosome (index.tsv)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    began = time.perf_counter()
    genome = load_fasta(args.fasta)
    genome.save(args.sequence, args.index)
    print(f"index_genome: {len(genome)} chromosomes, {int(genome.lengths.sum()):,} bases indexed in "
          f"{time.perf_counter() - began:.2f} s -> {args.index}", file=sys.stderr)


if __name__ == "__main__":
    run_cli(main)
