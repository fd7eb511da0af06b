"""The `index_genome` rule: parse the genome FASTA once into sequence.npy + index.tsv.

Every experiment then memory-maps the genome (`Genome.open_cached` on their directory) instead
of parsing the FASTA again. `--config` holds the section index_genome: `iupac` refuse (an
IUPAC code other than N is an error) or to_n (they become N, counted in the log).
"""

from __future__ import annotations

import argparse
import sys
import time

from workflow_scripts.config.sections import add_config_argument
from workflow_scripts.config.types import IndexGenomeSection, parse_typed_config
from workflow_scripts.data.fasta import read_fasta
from workflow_scripts.errors import run_cli


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fasta", required=True, help="plain, gzip or bgzip FASTA")
    parser.add_argument("--out-sequence", required=True, help="output: the bases (sequence.npy)")
    parser.add_argument(
        "--out-index", required=True, help="output: name, length, offset per chromosome (index.tsv)"
    )
    add_config_argument(parser, "index_genome")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    settings: IndexGenomeSection = parse_typed_config(args.config, required=("index_genome",))["index_genome"]
    began = time.perf_counter()
    genome, converted = read_fasta(args.fasta, settings.iupac)
    if converted:
        shown = ", ".join(f"{code} {count:,}" for code, count in sorted(converted.items()))
        print(
            f"index_genome: {sum(converted.values()):,} IUPAC codes turned into N ({shown})", file=sys.stderr
        )
    genome.save(args.out_sequence, args.out_index)
    print(
        f"index_genome: {len(genome)} chromosomes, {int(genome.lengths.sum()):,} bases indexed in "
        f"{time.perf_counter() - began:.2f} s -> {args.out_index}",
        file=sys.stderr,
    )


if __name__ == "__main__":
    run_cli(main)
