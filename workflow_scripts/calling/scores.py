"""The base model's per-position scores, read into sorted integer keys one chromosome at a time.

A scores table (written by score_base_model, or the user's own for any model) has one row per
scored position: gene_id, chrom, strand, position (1-based), donor, acceptor (probabilities on
the gene's strand, in [0, 1]). TSV, CSV or parquet. Rows outside the selected genes' spans (on
the same strand) are dropped; a position scored in several genes must carry one score, every
chromosome strand that holds selected genes must be scored, positions lie within their
chromosome, and at least MIN_SCORED_SHARE of the genes' positions are scored (a table of peaks
only would leave no TN to draw). Several tables (one per score_base_model shard) are read as one:
a position may lie in two of them, with one score. A shard's rows must lie in the regions its
record lists (calling/shards.py: a table copied over another shard's is named, with the regions it
should hold).

Positions are handled as int64 keys `group << 40 | position`, one group per (chromosome,
strand), so "within ±w nt on the same chromosome and strand" is one `searchsorted`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from workflow_scripts.calling.contract import SCORE_COLUMNS
from workflow_scripts.calling.score_checks import SPLICE_TYPES as SPLICE_TYPES  # the readers' name
from workflow_scripts.calling.score_checks import (
    STRANDS,
    check_scored_share,
    check_strands_scored,
    check_within_chromosome,
    typed_scores,
)
from workflow_scripts.calling.shards import check_rows_in_shard, read_shard_record
from workflow_scripts.data.tables import ROW, collect_batches, collect_table, scan_table
from workflow_scripts.errors import InputError

POSITION_BITS = 40


@dataclass
class Scores:
    """Unique scored positions in key order, with their donor and acceptor probabilities."""

    keys: np.ndarray  # int64, sorted, unique
    donor: np.ndarray  # float32
    acceptor: np.ndarray  # float32
    groups: list[tuple[str, str]]  # group index -> (chrom, strand)

    def of(self, splice_type: str) -> np.ndarray:
        return self.donor if splice_type == "donor" else self.acceptor

    def __len__(self) -> int:
        return len(self.keys)


def group_index(groups: list[tuple[str, str]]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "chrom": [g[0] for g in groups],
            "strand": [g[1] for g in groups],
            "group": np.arange(len(groups), dtype=np.int64),
        },
        schema={"chrom": pl.String, "strand": pl.String, "group": pl.Int64},
    )


def genome_groups(chromosomes: list[str]) -> list[tuple[str, str]]:
    return [(chrom, strand) for chrom in chromosomes for strand in STRANDS]


def encode(frame: pl.DataFrame, groups: list[tuple[str, str]]) -> np.ndarray:
    """Keys of a frame with chrom, strand, position (every (chrom, strand) must be a group)."""
    joined = frame.select("chrom", "strand", "position").join(
        group_index(groups), on=["chrom", "strand"], how="left", maintain_order="left"
    )
    return (joined["group"].to_numpy() << POSITION_BITS) | joined["position"].to_numpy().astype(np.int64)


def decode(keys: np.ndarray, groups: list[tuple[str, str]]) -> pl.DataFrame:
    group = keys >> POSITION_BITS
    return pl.DataFrame(
        {
            "chrom": [groups[g][0] for g in group.tolist()],
            "strand": [groups[g][1] for g in group.tolist()],
            "position": keys & ((1 << POSITION_BITS) - 1),
        },
        schema={"chrom": pl.String, "strand": pl.String, "position": pl.Int64},
    )


def inside_genes(frame: pl.DataFrame, genes: pl.DataFrame) -> pl.Series:
    """Whether each row lies in a gene span on its strand (merged spans, one searchsorted)."""
    if genes.height == 0:
        return pl.Series(np.zeros(frame.height, dtype=bool))
    groups = genome_groups(sorted(set(genes["chrom"].to_list()) | set(frame["chrom"].unique().to_list())))
    starts = encode(genes.select("chrom", "strand", pl.col("start").alias("position")), groups)
    ends = encode(genes.select("chrom", "strand", pl.col("end").alias("position")), groups)
    order = np.argsort(starts, kind="stable")
    starts, ends = starts[order], np.maximum.accumulate(ends[order])
    keys = encode(frame, groups)
    index = np.searchsorted(starts, keys, side="right") - 1
    return pl.Series(np.where(index >= 0, ends[np.maximum(index, 0)] >= keys, False))


DUPLICATE_TOLERANCE = 1e-6  # rows of overlapping genes repeat one position's score


def source_label(paths: list) -> str:
    """How errors name several tables (score_base_model's shards): the first and how many."""
    return str(paths[0]) if len(paths) == 1 else f"{paths[0]} (and {len(paths) - 1} more scores tables)"


def clean_chrom() -> pl.Expr:
    return pl.col("chrom").cast(pl.String).str.strip_chars()


def scored_chromosomes(tables: list[tuple], chromosomes: list[str]) -> list[str]:
    """The genome's chromosomes that the tables score, in genome order; a chromosome the genome
    lacks is one error naming its first row."""
    found: set[str] = set()
    for path, table in tables:
        unknown = collect_table(
            table.filter(clean_chrom().is_null() | ~clean_chrom().is_in(chromosomes)).head(1), path
        )
        if unknown.height:
            raise InputError(
                path,
                f"column 'chrom' row {unknown[ROW][0]}",
                f"chromosome '{unknown['chrom'][0]}' not in genome",
            )
        found |= set(collect_table(table.select(clean_chrom().unique()), path)["chrom"].to_list())
    return [chrom for chrom in chromosomes if chrom in found]


def table_rows(tables: list[tuple]) -> int:
    return sum(collect_table(table.select(pl.len()), path).item() for path, table in tables)


BATCH_ROWS = 1_000_000  # rows of one chromosome typed and checked at a time


@dataclass
class ScoredRows:
    """A chromosome's rows inside the genes, compact: key, donor, acceptor, and where each row
    came from (table index, row number) for the error that names a position scored twice."""

    keys: np.ndarray  # int64
    donor: np.ndarray  # float32
    acceptor: np.ndarray  # float32
    source: np.ndarray  # int32: the table's index
    row: np.ndarray  # int64: the row number in that table (ROW)

    @classmethod
    def of(cls, frame: pl.DataFrame, groups, source: int) -> ScoredRows:
        return cls(
            encode(frame, groups),
            frame["donor"].to_numpy(),
            frame["acceptor"].to_numpy(),
            np.full(frame.height, source, np.int32),
            frame[ROW].to_numpy().astype(np.int64),
        )

    @classmethod
    def joined(cls, parts: list[ScoredRows]) -> ScoredRows:
        if not parts:
            return cls(
                *(np.empty(0, dtype) for dtype in (np.int64, np.float32, np.float32, np.int32, np.int64))
            )
        return cls(*(np.concatenate([getattr(part, name) for part in parts]) for name in cls.__annotations__))


def chromosome_batches(tables: list[tuple], chrom: str) -> Iterator[tuple[int, pl.DataFrame]]:
    """Every table's rows on one chromosome, BATCH_ROWS at a time in table and row order, typed and
    checked, with the table's index."""
    for index, (path, table) in enumerate(tables):
        for batch in collect_batches(table.filter(clean_chrom() == chrom), path, BATCH_ROWS):
            yield index, typed_scores(batch, path)


def unique_positions(rows: ScoredRows, paths: list) -> tuple[np.ndarray, ...]:
    """Sorted unique keys (chromosome, strand, position) with their donor and acceptor scores.
    One position scored with two values (in one table or two) is one error naming its first row
    (`rows` are in table and row order; the stable sort keeps that order among equal keys)."""
    if len(rows.keys) == 0:
        return np.empty(0, np.int64), np.empty(0, np.float32), np.empty(0, np.float32)
    order = np.argsort(rows.keys, kind="stable")
    keys = rows.keys[order]
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    values, conflict = [], np.zeros(len(starts), dtype=bool)
    for scores in (rows.donor, rows.acceptor):
        ordered = scores[order]
        high, low = np.maximum.reduceat(ordered, starts), np.minimum.reduceat(ordered, starts)
        conflict |= high - low > DUPLICATE_TOLERANCE
        values.append(high)
    if conflict.any():
        first = int(order[starts[np.argmax(conflict)]])
        raise InputError(
            paths[rows.source[first]],
            f"column 'position' row {rows.row[first]}",
            "scored twice with different donor/acceptor values (one position, one strand: one score) "
            f"(got {int(rows.keys[first]) & ((1 << POSITION_BITS) - 1)!r})",
        )
    return keys[starts], *values


class ScoreTables:
    """One or several scores tables (score_base_model's shards) read one chromosome at a time and
    BATCH_ROWS rows at a time, so a job holds one batch as a table and, per row of the chromosome
    inside its genes, 32 bytes (ScoredRows) until they become 16 per scored position (key, donor,
    acceptor). `chrom_lengths`: the genome's chromosomes, name -> length,
    in genome order. Iterate `by_chromosome()`, then `report()` runs the checks that need every
    chromosome (strands scored, share of gene positions scored)."""

    def __init__(self, paths, genes: pl.DataFrame, chrom_lengths: dict[str, int]):
        self.paths = [paths] if isinstance(paths, (str, Path)) else list(paths)
        self.genes, self.chrom_lengths = genes, chrom_lengths
        self.tables = [
            (
                path,
                scan_table(path, required=SCORE_COLUMNS, columns=SCORE_COLUMNS[1:], field="calling.scores"),
            )
            for path in self.paths
        ]
        self.records = [read_shard_record(path) for path in self.paths]  # score_base_model's shards
        self.label = source_label(self.paths)
        self.rows = table_rows(self.tables)
        if self.rows == 0:
            raise InputError(self.label, "rows", "scores table has no rows")
        self.groups = genome_groups(list(chrom_lengths))
        self.scored: set[tuple[str, str]] = set()
        self.scored_chroms: list[str] | None = None
        self.read_chroms: set[str] = set()
        self.scored_by: list[set[tuple[str, str]]] = [set() for _ in self.paths]  # per table
        self.inside_rows = self.positions = 0

    def by_chromosome(self, only: set[str] | None = None) -> Iterator[tuple[str, Scores]]:
        """Each scored chromosome's Scores in genome order; `only`: these chromosomes alone (extract
        reads the ones its windows lie on; report() then counts only what was read)."""
        if self.scored_chroms is None:
            self.scored_chroms = scored_chromosomes(self.tables, list(self.chrom_lengths))
        if only is None:
            self.read_chroms |= set(self.chrom_lengths)  # every chromosome looked at
        for chrom in self.scored_chroms:
            if only is not None and chrom not in only:
                continue
            self.read_chroms.add(chrom)
            keys, donor, acceptor = unique_positions(self.inside_rows_of(chrom), self.paths)
            scores = Scores(keys, donor, acceptor, self.groups)
            self.positions += len(scores)
            yield chrom, scores

    def inside_rows_of(self, chrom: str) -> ScoredRows:
        """The chromosome's rows inside its genes' spans (on their strand), batch by batch."""
        genes, parts = self.genes.filter(pl.col("chrom") == chrom), []
        for source, batch in chromosome_batches(self.tables, chrom):
            check_within_chromosome(batch, self.chrom_lengths[chrom], self.paths[source])
            record = self.records[source]
            if record is not None:
                check_rows_in_shard(batch, record, self.paths[source])
            inside = batch.filter(inside_genes(batch, genes))
            self.inside_rows += inside.height
            pairs = set(inside.select("chrom", "strand").unique().iter_rows())
            self.scored |= pairs
            self.scored_by[source] |= pairs
            parts.append(ScoredRows.of(inside, self.groups, source))
        return ScoredRows.joined(parts)

    def check_shards_scored(self) -> None:
        """A shard whose table holds no row on a strand its record's regions lie on (an emptied or
        truncated table) is named, with those regions, before the general strand check."""
        for path, record, scored in zip(self.paths, self.records, self.scored_by):
            if record is None:
                continue
            unscored = [r for r in record.regions if (r[0], r[1]) not in scored and r[0] in self.read_chroms]
            if unscored:
                chrom, strand, start, end = unscored[0]
                raise InputError(
                    path,
                    "rows",
                    f"no scored position on chromosome '{chrom}' strand '{strand}', where shard {record.shard} of "
                    f"{record.shards} scores {chrom}:{start:,}-{end:,} ({record.path.name}): this table is not "
                    "that shard's whole output; delete it and rerun to score it again",
                )

    def report(self) -> dict:
        if self.inside_rows == 0:
            raise InputError(
                self.label, "position", "no scored position lies inside a selected gene of the annotation"
            )
        self.check_shards_scored()
        check_strands_scored(self.label, self.scored, self.genes)
        check_scored_share(self.label, self.positions, self.genes)
        return {
            "score_tables": len(self.paths),
            "score_rows": self.rows,
            "scored_positions": self.positions,
            "rows_outside_genes": self.rows - self.inside_rows,
        }


def read_scores(paths, genes: pl.DataFrame, chrom_lengths: dict[str, int]) -> tuple[Scores, dict]:
    """Every chromosome's scores in one Scores (tests and small tables; make_calls goes by chromosome)."""
    tables = ScoreTables(paths, genes, chrom_lengths)
    parts = [scores for _, scores in tables.by_chromosome()]
    report = tables.report()
    keys, donor, acceptor = (
        np.concatenate([getattr(p, n) for p in parts]) for n in ("keys", "donor", "acceptor")
    )
    return Scores(keys, donor, acceptor, tables.groups), report
