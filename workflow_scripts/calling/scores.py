"""The base model's per-position scores, read once into sorted integer keys.

A scores table (written by score_base_model, or the user's own for any model) has one row per
scored position: gene_id, chrom, strand, position (1-based), donor, acceptor (probabilities on
the gene's strand, in [0, 1]). TSV, CSV or parquet. Rows outside the selected genes' spans (on
the same strand) are dropped; a position scored in several genes must carry one score, every
chromosome strand that holds selected genes must be scored, and at least MIN_SCORED_SHARE of the
genes' positions (a table of peaks only would leave no TN to draw).

Positions are handled as int64 keys `group << 40 | position`, one group per (chromosome,
strand), so "within ±w nt on the same chromosome and strand" is one `searchsorted`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from workflow_scripts.calling.contract import SCORE_COLUMNS
from workflow_scripts.data.tables import ROW, fail_on_first, numbered_rows, read_table
from workflow_scripts.errors import InputError

SPLICE_TYPES = ("donor", "acceptor")
POSITION_BITS = 40
STRANDS = ("+", "-")


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


def as_number(frame: pl.DataFrame, column: str, dtype) -> pl.Expr:
    """A text or numeric column cast to `dtype`; what does not parse becomes null."""
    value = pl.col(column)
    if frame.schema[column] == pl.String:
        value = value.str.strip_chars()
    return value.cast(dtype, strict=False)


def typed_scores(frame: pl.DataFrame, path) -> pl.DataFrame:
    """Cast and check the columns, naming the first bad row."""
    frame = numbered_rows(frame)
    parsed = frame.with_columns(
        pl.col("chrom").cast(pl.String).str.strip_chars(),
        pl.col("strand").cast(pl.String).str.strip_chars(),
        as_number(frame, "position", pl.Int64).alias("position_int"),
        as_number(frame, "position", pl.Float64).alias("position_float"),
        *(as_number(frame, c, pl.Float64).alias(f"{c}_float") for c in SPLICE_TYPES),
    )
    fail_on_first(
        parsed,
        pl.col("position_int").is_null()
        | (pl.col("position_int") < 1)
        | (pl.col("position_int") != pl.col("position_float")),  # 12.7 stored as a float: not 12
        path,
        "position",
        "not a positive integer",
    )
    fail_on_first(
        parsed,
        ~pl.col("strand").is_in(STRANDS) | pl.col("strand").is_null(),
        path,
        "strand",
        "strand must be '+' or '-'",
    )
    for column in SPLICE_TYPES:
        value = pl.col(f"{column}_float")
        fail_on_first(
            parsed,
            value.is_null() | value.is_nan() | (value < 0) | (value > 1),
            path,
            column,
            "not a probability in [0, 1]",
        )
    return parsed.select(
        "chrom",
        "strand",
        pl.col("position_int").alias("position"),
        *(pl.col(f"{c}_float").cast(pl.Float32).alias(c) for c in SPLICE_TYPES),
        ROW,
    )


def inside_genes(frame: pl.DataFrame, genes: pl.DataFrame) -> pl.Series:
    """Whether each row lies in a gene span on its strand (merged spans, one searchsorted)."""
    groups = genome_groups(sorted(set(genes["chrom"].to_list()) | set(frame["chrom"].unique().to_list())))
    starts = encode(genes.select("chrom", "strand", pl.col("start").alias("position")), groups)
    ends = encode(genes.select("chrom", "strand", pl.col("end").alias("position")), groups)
    order = np.argsort(starts, kind="stable")
    starts, ends = starts[order], np.maximum.accumulate(ends[order])
    keys = encode(frame, groups)
    index = np.searchsorted(starts, keys, side="right") - 1
    return pl.Series(np.where(index >= 0, ends[np.maximum(index, 0)] >= keys, False))


DUPLICATE_TOLERANCE = 1e-6  # rows of overlapping genes repeat one position's score


def conflicting_rows() -> pl.Expr:
    return pl.any_horizontal((pl.col(c).max() - pl.col(c).min()) > DUPLICATE_TOLERANCE for c in SPLICE_TYPES)


def check_strands_scored(path, inside: pl.DataFrame, genes: pl.DataFrame) -> None:
    """Every chromosome and strand that holds selected genes has scored positions: a table of one
    strand only would leave the other strand's sites silently unscored (no calls there)."""
    scored = set(inside.select("chrom", "strand").unique().iter_rows())
    for chrom, strand, n_genes in (
        genes.group_by("chrom", "strand").agg(pl.len()).sort("chrom", "strand").iter_rows()
    ):
        if (chrom, strand) not in scored:
            raise InputError(
                path,
                "strand",
                f"no scored position on chromosome '{chrom}' strand '{strand}', "
                f"where {n_genes:,} selected gene(s) lie; score both strands of every gene",
            )


def check_on_chromosomes(frame: pl.DataFrame, chrom_lengths: dict[str, int], path) -> None:
    """Known chromosomes, positions within them (a huge position would alias onto another strand)."""
    lengths = pl.DataFrame(
        {"chrom": list(chrom_lengths), "chrom_length": list(chrom_lengths.values())},
        schema={"chrom": pl.String, "chrom_length": pl.Int64},
    )
    placed = frame.join(lengths, on="chrom", how="left", maintain_order="left")
    unknown = placed.filter(pl.col("chrom_length").is_null()).head(1)
    if unknown.height:
        raise InputError(
            path, f"column 'chrom' row {unknown[ROW][0]}", f"chromosome '{unknown['chrom'][0]}' not in genome"
        )
    beyond = placed.filter(pl.col("position") > pl.col("chrom_length")).head(1)
    if beyond.height:
        raise InputError(
            path,
            f"column 'position' row {beyond[ROW][0]}",
            f"{beyond['position'][0]:,} is past the end of chromosome '{beyond['chrom'][0]}' "
            f"({beyond['chrom_length'][0]:,} nt)",
        )


MIN_SCORED_SHARE = 0.95  # of the selected genes' positions; below it a table is a partial one


def gene_positions(genes: pl.DataFrame) -> int:
    """Positions covered by the genes' spans, overlapping genes of one strand counted once."""
    spans = genes.sort("chrom", "strand", "start").with_columns(
        pl.col("end").cum_max().shift(1).over("chrom", "strand").alias("reach")
    )
    starts_new = pl.col("reach").is_null() | (pl.col("start") > pl.col("reach"))
    merged = spans.with_columns(starts_new.cum_sum().over("chrom", "strand").alias("block")).group_by(
        "chrom", "strand", "block"
    )
    return int(merged.agg((pl.col("end").max() - pl.col("start").min() + 1).alias("n"))["n"].sum())


def check_scored_share(path, n_scored: int, genes: pl.DataFrame) -> None:
    """A table of peaks only (or of some genes) leaves sites unscored and no TN to draw: refused."""
    n_positions = gene_positions(genes)
    if n_scored < MIN_SCORED_SHARE * n_positions:
        raise InputError(
            path,
            "position",
            f"scores {n_scored:,} of the selected genes' {n_positions:,} positions ({n_scored / n_positions:.1%}); "
            "calls and TN are drawn from scored positions, so score every position of every gene",
        )


def read_scores(path, genes: pl.DataFrame, chrom_lengths: dict[str, int]) -> tuple[Scores, dict]:
    """`chrom_lengths`: the genome's chromosomes, name -> length, in genome order."""
    frame = read_table(path, required=SCORE_COLUMNS, columns=SCORE_COLUMNS[1:], field="calling.scores")
    if frame.height == 0:
        raise InputError(path, "rows", "scores table has no rows")
    frame = typed_scores(frame, path)
    check_on_chromosomes(frame, chrom_lengths, path)
    chromosomes = list(chrom_lengths)
    inside = frame.filter(inside_genes(frame, genes))
    if inside.height == 0:
        raise InputError(path, "position", "no scored position lies inside a selected gene of the annotation")
    check_strands_scored(path, inside, genes)
    groups = genome_groups(chromosomes)
    keyed = (
        inside.with_columns(pl.Series("key", encode(inside, groups)))
        .group_by("key")
        .agg(
            pl.col("donor").max(),
            pl.col("acceptor").max(),
            pl.col(ROW).min(),
            conflict=conflicting_rows(),
            position=pl.col("position").first(),
        )
        .sort("key")
    )
    fail_on_first(
        keyed,
        pl.col("conflict"),
        path,
        "position",
        "scored twice with different donor/acceptor values (one position, one strand: one score)",
    )
    check_scored_share(path, keyed.height, genes)
    scores = Scores(keyed["key"].to_numpy(), keyed["donor"].to_numpy(), keyed["acceptor"].to_numpy(), groups)
    return scores, {
        "score_rows": frame.height,
        "scored_positions": len(scores),
        "rows_outside_genes": frame.height - inside.height,
    }
