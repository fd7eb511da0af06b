"""Resources that grow with the work: rescore_sites' memory (calling.start regions).

rescore_sites holds every candidate of the scored regions (about 1 in 100 nt, each strand) with
its score-profile features, and one chromosome's scores at a time. Measured on the README's A.
arenosa region tiled to 0.6-19 M scored nt (tree re-scorer, one thread; peak RSS 437 MB at 0.6 M,
939 MB at 9.6 M on one chromosome, 1,190 MB at 19.2 M on two): about 420 MB to start and 33 MB per
million nt scored. The job asks for half as much again: MB_BASE + MB_PER_MILLION_NT per million,
times the attempt (a retry after running out gets more). A whole 150-Mb genome, both strands
(300 M nt), asks for about 16 GB (docs/calling.md).

The scored nt are known before the job runs from what the user gave: the BED of calling.regions
(each region on both strands), else every chromosome of the genome index, else the FASTA's size
(gzip: DNA compresses about 4x). Standard library only: Snakemake calls it while it plans.
"""

from __future__ import annotations

import math
from pathlib import Path

MB_BASE = 1000
MB_PER_MILLION_NT = 50
GZIP_RATIO = 4.5  # an upper bound of DNA's gzip ratio: more memory rather than less


def bed_nt(path: Path) -> int:
    total = 0
    for line in path.read_text().splitlines():
        fields = line.split("\t") if "\t" in line else line.split()
        if len(fields) < 3 or line.startswith(("#", "track", "browser")):
            continue
        total += max(int(fields[2]) - int(fields[1]), 0)
    return total


def index_nt(path: Path) -> int:
    """results/genome/index.tsv: name, length, offset."""
    rows = [line.split("\t") for line in path.read_text().splitlines()[1:] if line.strip()]
    return sum(int(row[1]) for row in rows)


def fasta_nt(path: Path) -> int:
    size = path.stat().st_size
    return int(size * GZIP_RATIO) if path.name.endswith((".gz", ".bgz")) else size


def scored_nt(regions_bed: str | None, genome_index: str, genome_fasta: str) -> int | None:
    """Both strands' nt that score_base_model scores, from the first of these that exists."""
    for path, count in ((regions_bed, bed_nt), (genome_index, index_nt), (genome_fasta, fasta_nt)):
        if path and Path(path).is_file():
            try:
                return 2 * count(Path(path))
            except (OSError, ValueError, IndexError):
                continue
    return None


def rescore_mem_mb(nt: int | None, attempt: int = 1) -> int:
    """rescore_sites' mem_mb for `nt` scored nt (None: unknown, the base alone), in whole GB."""
    megabytes = MB_BASE + MB_PER_MILLION_NT * (nt or 0) / 1e6
    return int(math.ceil(megabytes * max(attempt, 1) / 1000) * 1000)
