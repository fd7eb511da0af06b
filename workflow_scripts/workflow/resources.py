"""Resources that grow with the work: rescore_sites' memory (calling.start regions).

rescore_sites holds every candidate of the scored regions (about 1 in 100 nt, each strand) with
its score-profile features, and one chromosome's scores at a time. Measured (tree re-scorer, one
thread, peak RSS): the README's A. arenosa region tiled, 437 MB at 0.6 M scored nt, 939 MB at
9.6 M on one chromosome, 1,190 MB at 19.2 M on two; synthetic scores on one chromosome
(`python -m benchmarks run rescore-memory`), 488 MB at 1 M, 1,416 MB at 16 M; the whole of A.
arenosa chr2 with five CNNs, 2.4 GB at 28.6 M (docs/calling.md). So about 420 MB to start, some
30 MB per million nt in all and up to 30 more per million nt of the largest chromosome. The job
asks for MB_BASE + MB_PER_MILLION_NT per million nt in all + as much again per million nt of the
largest chromosome, times the attempt (a retry after running out gets more), in whole GB: 2 GB
for the README's region, about 16 GB for a 150-Mb genome of 30-Mb chromosomes (300 M nt).

The scored nt are known before the job runs from what the user gave: the BED of calling.regions
(each region on both strands), else every chromosome of the genome index, else the FASTA's size
(gzip: DNA compresses about 4x; its largest chromosome taken as the whole). Standard library
only: Snakemake calls it while it plans.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

MB_BASE = 1000
MB_PER_MILLION_NT = 40  # of all the scored nt, and again of the largest chromosome's
GZIP_RATIO = 4.5  # an upper bound of DNA's gzip ratio: more memory rather than less


def bed_nt(path: Path) -> dict[str, int]:
    """nt per chromosome of a BED's intervals (one strand)."""
    by_chrom: dict[str, int] = {}
    for line in path.read_text().splitlines():
        fields = line.split("\t") if "\t" in line else line.split()
        if len(fields) < 3 or line.startswith(("#", "track", "browser")):
            continue
        by_chrom[fields[0]] = by_chrom.get(fields[0], 0) + max(int(fields[2]) - int(fields[1]), 0)
    return by_chrom


def index_nt(path: Path) -> dict[str, int]:
    """results/genome/index.tsv: name, length, offset."""
    rows = [line.split("\t") for line in path.read_text().splitlines()[1:] if line.strip()]
    return {row[0]: int(row[1]) for row in rows}


def fasta_nt(path: Path) -> dict[str, int]:
    size = path.stat().st_size
    return {"genome": int(size * GZIP_RATIO) if path.name.endswith((".gz", ".bgz")) else size}


@dataclass(frozen=True)
class ScoredNt:
    total: int  # both strands' nt that score_base_model scores
    largest: int  # those of the largest chromosome


def scored_nt(regions_bed: str | None, genome_index: str, genome_fasta: str) -> ScoredNt | None:
    """From the first of these that exists; None when none does."""
    for path, count in ((regions_bed, bed_nt), (genome_index, index_nt), (genome_fasta, fasta_nt)):
        if path and Path(path).is_file():
            try:
                by_chrom = count(Path(path))
            except (OSError, ValueError, IndexError):
                continue
            return ScoredNt(2 * sum(by_chrom.values()), 2 * max(by_chrom.values(), default=0))
    return None


def rescore_mem_mb(nt: ScoredNt | None, attempt: int = 1) -> int:
    """rescore_sites' mem_mb for `nt` (None: unknown, the base alone), in whole GB."""
    million = (nt.total + nt.largest) / 1e6 if nt else 0.0
    megabytes = MB_BASE + MB_PER_MILLION_NT * million
    return int(math.ceil(megabytes * max(attempt, 1) / 1000) * 1000)
