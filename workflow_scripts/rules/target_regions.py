"""The `target_regions` rule (calling.start regions): calling.regions' BED, or every chromosome of
the genome, -> regions.parquet, the spans score_base_model scores (calling/target_regions.py).

`--regions`: the BED (absent: whole chromosomes, both strands). The table has genes.parquet's
columns, so score_base_model and rescore_sites read it as they read genes.
"""

from __future__ import annotations

import sys
import time

from workflow_scripts.calling.target_regions import target_regions
from workflow_scripts.config.stages.target_regions import STAGE
from workflow_scripts.data.fasta import open_genome
from workflow_scripts.errors import run_cli
from workflow_scripts.io_utils import write_parquet


def main(argv: list[str] | None = None) -> None:
    paths, _ = STAGE.parse(argv)
    began = time.perf_counter()
    genome = open_genome(paths.genome)
    table = target_regions(paths.regions, genome)
    write_parquet(table, paths.out_regions)
    nt = int((table["end"] - table["start"] + 1).sum())
    where = paths.regions or f"all {len(genome.names):,} chromosomes"
    print(
        f"target_regions: {table.height:,} regions of {where}, {nt:,} nt to score (each strand counted) "
        f"({time.perf_counter() - began:.1f} s)",
        file=sys.stderr,
    )


if __name__ == "__main__":
    run_cli(main)
