"""The base_data folder (BASE_DATA_CONTRACT.md): blocks.parquet, sequence.npy, labels.npy and
manifest.json, built from the annotation's tables (annotate_sites, cluster_genes) and the genome
index, and read back (`open_base_data`)."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from workflow_scripts.base_training import arrays, splits
from workflow_scripts.base_training.blocks import cut_cores, genes_in_cores, merged_spans
from workflow_scripts.base_training.layout_stats import errorseq_layout, layout_table, osai_layout
from workflow_scripts.calling.genome_checks import site_dinucleotides
from workflow_scripts.data.genome import Genome
from workflow_scripts.errors import InputError
from workflow_scripts.io_utils import atomic_path, write_parquet
from workflow_scripts.progress import Console, Progress

FORMAT = 1
# OpenSpliceAI's --canonical-only keeps GT-AG, GC-AG and AT-AC introns; errorseq's site table holds
# sites, not introns, so a site is kept when its own dinucleotide is one of those ends.
CANONICAL_ENDS = {"donor": {b"GT", b"GC", b"AT"}, "acceptor": {b"AG", b"AC"}}
BLOCK_COLUMNS: dict[str, Any] = {
    "block": pl.Int32,
    "split": pl.String,
    "chrom": pl.String,
    "strand": pl.String,
    "core_start": pl.Int64,
    "core_end": pl.Int64,
    "offset": pl.Int64,
    "length": pl.Int64,
    "genes": pl.List(pl.String),
    "cluster": pl.Int64,
}
BLOCK_SCHEMA = pl.Schema(BLOCK_COLUMNS)


@dataclass(frozen=True)
class Settings:
    """base_data's keys, as the job got them (config/types.py: BaseDataSection)."""

    context: int
    max_core: int
    merge_gap: int
    split: str  # clusters | chromosome
    fractions: dict[str, float]
    test_chromosomes: list
    validation_chromosomes: list
    seed: int
    canonical_only: bool
    folds: int = 0
    fold: int = 0

    @property
    def half_context(self) -> int:
        return self.context // 2


def canonical_sites(sites: pl.DataFrame, genome: Genome) -> pl.DataFrame:
    pairs = site_dinucleotides(sites, genome)
    text = [bytes(row) for row in pairs]
    keep = [
        pair in CANONICAL_ENDS[kind] for pair, kind in zip(text, sites["splice_type"].to_list(), strict=True)
    ]
    return sites.filter(pl.Series(keep, dtype=pl.Boolean))


def plan_blocks(
    genes: pl.DataFrame, clusters: pl.DataFrame, genome: Genome, settings: Settings
) -> pl.DataFrame:
    """The blocks (BLOCK_SCHEMA), in genome order, with their split and offsets."""
    spans = merged_spans(genes, settings.merge_gap)
    if settings.split == "chromosome":
        split_index = splits.chromosome_splits(
            spans, settings.test_chromosomes, settings.validation_chromosomes, genome.names
        )
        units = splits.split_units(spans, clusters)
    else:
        split_index, units = splits.cluster_splits(
            spans, clusters, settings.fractions, settings.seed, settings.folds, settings.fold
        )
    spans = spans.with_columns(
        pl.Series("split", np.array(splits.SPLITS)[split_index]), pl.Series("cluster", units)
    )
    cores = genes_in_cores(cut_cores(spans, settings.max_core), genes).join(
        spans.select("span", "split", "cluster"), on="span", maintain_order="left"
    )
    lengths = (cores["core_end"] - cores["core_start"] + 2 * settings.half_context).to_numpy()
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    return (
        cores.with_columns(
            pl.int_range(pl.len()).alias("block"),
            pl.Series("offset", offsets),
            pl.Series("length", lengths),
            pl.col("genes").fill_null([]),
        )
        .select(list(BLOCK_SCHEMA))
        .cast(BLOCK_SCHEMA)
    )


def write_arrays(
    blocks: pl.DataFrame, sites: pl.DataFrame, genome: Genome, settings: Settings, paths, console: Console
) -> dict[str, int]:
    """Fill sequence.npy and labels.npy (each written whole to a temporary file, then renamed)."""
    total = int(blocks["length"].sum())
    masked = arrays.test_cores(blocks)
    empty = np.empty((0, 2), dtype=np.int64)
    progress = Progress(
        "base_data", total, "nt", tallies={"blocks": blocks.height}, console=console, log=sys.stderr
    )
    counts = {"padding_nt": 0, "masked_nt": 0}
    with atomic_path(paths.out_sequence) as seq_tmp, atomic_path(paths.out_labels) as lab_tmp:
        sequence = np.lib.format.open_memmap(seq_tmp, mode="w+", dtype=np.uint8, shape=(total,))
        labels = np.lib.format.open_memmap(lab_tmp, mode="w+", dtype=np.int8, shape=(total,))
        for block in blocks.iter_rows(named=True):
            done = arrays.fill_block(
                genome, block, settings.half_context, masked.get(block["chrom"], empty), sequence, labels
            )
            for key, value in done.items():
                counts[key] += value
            progress.advance(block["length"], blocks=1)
        found = arrays.site_index(blocks, sites, settings.half_context)
        counts["sites_placed"] = arrays.place_sites(labels, found)
        counts["sites_outside"] = sites.height - found.height
        sequence.flush()
        labels.flush()
        del sequence, labels
    progress.finish()
    return counts


def split_counts(blocks: pl.DataFrame, labels: np.ndarray) -> dict[str, dict[str, int]]:
    counts = {}
    for name in splits.SPLITS:
        part = blocks.filter(pl.col("split") == name)
        donors = acceptors = 0
        for offset, length in zip(part["offset"].to_list(), part["length"].to_list(), strict=True):
            piece = labels[offset : offset + length]
            donors += int((piece == arrays.DONOR).sum())
            acceptors += int((piece == arrays.ACCEPTOR).sum())
        counts[name] = {
            "blocks": part.height,
            "genes": int(part["genes"].explode().drop_nulls().n_unique()) if part.height else 0,
            "units": int(part["cluster"].n_unique()) if part.height else 0,
            "labelled_nt": int((part["core_end"] - part["core_start"]).sum()),
            "donors": donors,
            "acceptors": acceptors,
        }
    return counts


def layouts(
    blocks: pl.DataFrame, genes: pl.DataFrame, settings: Settings, padding_nt: int
) -> dict[str, dict]:
    """errorseq's blocks and OpenSpliceAI's windows on the same genes (layout_stats.py)."""
    cores = (blocks["core_end"] - blocks["core_start"]).to_numpy()
    gene_lengths = (genes["end"] - genes["start"] + 1).to_numpy()
    return {
        "errorseq": errorseq_layout(cores, settings.half_context, padding_nt, genes.height),
        "openspliceai": osai_layout(gene_lengths, settings.context),
    }


def print_layouts(stats: dict[str, dict]) -> None:
    for line in layout_table(stats["errorseq"], stats["openspliceai"]):
        print(f"base_data: {line}", file=sys.stderr)


@dataclass(frozen=True)
class BaseData:
    """A base_data folder read back: the blocks and the two flat arrays (memory-mapped)."""

    blocks: pl.DataFrame
    sequence: np.ndarray
    labels: np.ndarray

    def block(self, index: int) -> tuple[np.ndarray, np.ndarray]:
        row = self.blocks.row(index, named=True)
        where = slice(row["offset"], row["offset"] + row["length"])
        return self.sequence[where], self.labels[where]


def open_base_data(blocks: str | Path, sequence: str | Path, labels: str | Path) -> BaseData:
    table = pl.read_parquet(blocks)
    missing = [name for name in BLOCK_SCHEMA if name not in table.columns]
    if missing:
        raise InputError(blocks, f"column '{missing[0]}'", "missing; not a base_data blocks.parquet")
    seq = np.load(sequence, mmap_mode="r")
    lab = np.load(labels, mmap_mode="r")
    end = int((table["offset"] + table["length"]).max() or 0)  # type: ignore[arg-type]
    for path, array in ((sequence, seq), (labels, lab)):
        if array.ndim != 1 or array.shape[0] != end:
            raise InputError(path, "length", f"{array.shape} does not match blocks.parquet (ends at {end:,})")
    return BaseData(table, seq, lab)


def write_blocks(blocks: pl.DataFrame, path) -> None:
    write_parquet(blocks, path)
