"""The genes to score, and how they are grouped: genes.parquet read and checked against the genome,
then genes of one chromosome and strand that lie less than one model context apart merged into
regions (scoring the gap costs less than a second pair of flanks; calling/scoring.py runs them).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import polars as pl

from workflow_scripts.calling.contract import GENE_COLUMNS
from workflow_scripts.data.call_table import chrom_hint
from workflow_scripts.data.genome import Genome
from workflow_scripts.data.tables import ROW, fail_on_first, numbered_rows, read_table
from workflow_scripts.errors import InputError

MAX_REGION = 2_000_000  # nt: merging stops here, so one region's scores stay small in memory


@dataclass(frozen=True)
class Region:
    """Positions [start, end) (0-based) of one chromosome and strand, covering `genes` (row indices)."""

    chrom: int
    minus: bool
    start: int
    end: int
    genes: tuple[int, ...]

    def chunk_starts(self, chunk_length: int) -> range:
        return range(0, self.end - self.start, chunk_length)


SPAN_COLUMNS = ("gene_id", "chrom", "start", "end", "strand")  # the genes.parquet columns read here
assert set(SPAN_COLUMNS) <= set(GENE_COLUMNS)


def read_genes(path: str | Path, genome: Genome) -> pl.DataFrame:
    """Gene spans (1-based, inclusive) on chromosomes of the genome; the first bad row is one error."""
    frame = numbered_rows(read_table(path, required=SPAN_COLUMNS, columns=SPAN_COLUMNS))
    if frame.height == 0:
        raise InputError(path, "rows", "no genes to score")
    frame = frame.with_columns(
        pl.col("gene_id", "chrom", "strand").cast(pl.String),
        pl.col("start", "end").cast(pl.Int64, strict=False),
    )
    lengths = pl.DataFrame(
        {"chrom": genome.names, "chrom_length": genome.lengths},
        schema={"chrom": pl.String, "chrom_length": pl.Int64},
    )
    frame = frame.join(lengths, on="chrom", how="left", maintain_order="left")
    unknown = frame.filter(pl.col("chrom_length").is_null()).head(1)
    if unknown.height:
        name = unknown["chrom"][0]
        raise InputError(
            path,
            f"column 'chrom' row {unknown[ROW][0]}",
            f"chromosome '{name}' not in genome{chrom_hint(name, genome)}",
        )
    fail_on_first(
        frame,
        ~pl.col("strand").is_in(["+", "-"]) | pl.col("strand").is_null(),
        path,
        "strand",
        "strand must be '+' or '-'",
    )
    fail_on_first(
        frame, pl.col("start").is_null() | (pl.col("start") < 1), path, "start", "not a positive integer"
    )
    fail_on_first(
        frame, pl.col("end").is_null() | (pl.col("end") < pl.col("start")), path, "end", "not >= start"
    )
    fail_on_first(frame, pl.col("end") > pl.col("chrom_length"), path, "end", "past the chromosome's end")
    return frame.select(SPAN_COLUMNS)


def plan_regions(genes: pl.DataFrame, genome: Genome, merge_gap: int) -> list[Region]:
    """Genes (chrom, start, end 1-based inclusive, strand) grouped into regions, in genome order."""
    order = genes.with_row_index("row").sort("chrom", "strand", "start", "end", "row")
    regions: list[Region] = []
    for row, chrom, strand, start, end in order.select("row", "chrom", "strand", "start", "end").iter_rows():
        gene = Region(genome.index_of[chrom], strand == "-", start - 1, end, (row,))
        last = regions[-1] if regions else None
        if (
            last is not None
            and (last.chrom, last.minus) == (gene.chrom, gene.minus)
            and gene.start - last.end < merge_gap
            and max(gene.end, last.end) - last.start <= MAX_REGION
        ):
            regions[-1] = Region(
                last.chrom, last.minus, last.start, max(gene.end, last.end), last.genes + (row,)
            )
        else:
            regions.append(gene)
    return regions
