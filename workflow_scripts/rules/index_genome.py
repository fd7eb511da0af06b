"""The `index_genome` rule: parse the genome FASTA once into sequence.npy + index.tsv.

Every experiment then memory-maps the genome (`Genome.open_cached` on their directory) instead
of parsing the FASTA again. `--config` holds the section index_genome: `iupac` refuse (an
IUPAC code other than N is an error) or to_n (they become N, counted in the log). `--out-record`:
the FASTA's name, bytes and sha256, the provenance of everything made from the index.
"""

from __future__ import annotations

import sys
import time

from workflow_scripts.config.stages.index_genome import STAGE
from workflow_scripts.config.types import IndexGenomeSection
from workflow_scripts.data.fasta import read_fasta
from workflow_scripts.errors import run_cli
from workflow_scripts.evaluation.records import file_record
from workflow_scripts.io_utils import write_json


def main(argv: list[str] | None = None) -> None:
    paths, cfg = STAGE.parse(argv)
    settings: IndexGenomeSection = cfg.index_genome
    began = time.perf_counter()
    genome, converted = read_fasta(paths.fasta, settings.iupac)
    if converted:
        shown = ", ".join(f"{code} {count:,}" for code, count in sorted(converted.items()))
        print(
            f"index_genome: {sum(converted.values()):,} IUPAC codes turned into N ({shown})", file=sys.stderr
        )
    genome.save(paths.out_sequence, paths.out_index)
    if paths.out_record:  # provenance travels with the data (evaluation/records.py)
        write_json(paths.out_record, {"fasta": file_record(paths.fasta)})
    print(
        f"index_genome: {len(genome)} chromosomes, {int(genome.lengths.sum()):,} bases indexed in "
        f"{time.perf_counter() - began:.2f} s -> {paths.out_index}",
        file=sys.stderr,
    )


if __name__ == "__main__":
    run_cli(main)
