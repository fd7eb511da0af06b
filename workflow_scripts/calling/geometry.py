"""Where an annotation's exons lie, checked before any site is made of them.

A transcript's exons must not overlap (a nested exon would move a donor inside the exon around
it), each exon must lie inside its transcript's and its gene's declared lines (a gene line
narrower than its exons would leave those sites unscored) and inside its chromosome, and all
exons of one gene lie on one chromosome and strand (one gene_id on two chromosomes would become
one gene spanning both). The first violation is an InputError naming the line(s) at fault.
"""

from __future__ import annotations

import polars as pl

from workflow_scripts.calling.gff import Annotation
from workflow_scripts.errors import InputError


def check_exon_geometry(
    annotation: Annotation, exons: pl.DataFrame, chrom_lengths: dict[str, int] | None = None
) -> None:
    """`exons`: calling.annotation.exon_frame (chrom, start, end, strand, transcript_id, line, gene_id)."""
    path = annotation.path
    check_one_place_per_gene(exons, path)
    check_no_overlaps(exons, path)
    check_inside_parent(exons, transcript_lines(annotation), "transcript_id", "transcript", path)
    check_inside_parent(exons, gene_lines(annotation), "gene_id", "gene", path)
    if chrom_lengths is not None:
        check_inside_chromosomes(exons, chrom_lengths, path)


def first_by_line(frame: pl.DataFrame, violation: pl.Expr) -> dict | None:
    """The violating row that comes first in the file, or None."""
    hit = frame.filter(violation).sort("line").head(1)
    return hit.row(0, named=True) if hit.height else None


def check_one_place_per_gene(exons: pl.DataFrame, path) -> None:
    spread = (
        exons.group_by("gene_id")
        .agg(
            pl.col("chrom").unique(maintain_order=True).alias("chroms"),
            pl.col("strand").n_unique().alias("strands"),
            pl.col("line").min(),
        )
        .filter((pl.col("chroms").list.len() > 1) | (pl.col("strands") > 1))
        .sort("line")
        .head(1)
    )
    if spread.height:
        row = spread.row(0, named=True)
        where = " and ".join(row["chroms"]) if len(row["chroms"]) > 1 else "both strands"
        raise InputError(
            path,
            f"gene_id '{row['gene_id']}'",
            f"exons on {where} (first at line {row['line']}); one gene lies on one chromosome and strand",
        )


def check_no_overlaps(exons: pl.DataFrame, path) -> None:
    ordered = exons.sort("transcript_id", "start", "end").with_columns(
        pl.col("start", "end", "line").shift(1).over("transcript_id").name.prefix("previous_")
    )
    row = first_by_line(ordered, pl.col("start") <= pl.col("previous_end"))
    if row:
        raise InputError(
            path,
            f"lines {row['previous_line']} and {row['line']}",
            f"exons {row['previous_start']}-{row['previous_end']} and {row['start']}-{row['end']} "
            f"of transcript '{row['transcript_id']}' overlap",
        )


def transcript_lines(annotation: Annotation) -> pl.DataFrame:
    spans = annotation.transcript_spans
    return span_frame("transcript_id", list(spans), list(spans.values()))


def gene_lines(annotation: Annotation) -> pl.DataFrame:
    declared = {g: r for g, r in annotation.genes.items() if r["start"] is not None}
    return span_frame(
        "gene_id",
        list(declared),
        [(r["chrom"], r["start"], r["end"], r["line"]) for r in declared.values()],
    )


def span_frame(key: str, names: list[str], spans: list[tuple]) -> pl.DataFrame:
    return pl.DataFrame(
        [(name, *span) for name, span in zip(names, spans)],
        schema={
            key: pl.String,
            "parent_chrom": pl.String,
            "parent_start": pl.Int64,
            "parent_end": pl.Int64,
            "parent_line": pl.Int64,
        },
        orient="row",
    )


def check_inside_parent(exons: pl.DataFrame, parents: pl.DataFrame, key: str, role: str, path) -> None:
    row = first_by_line(
        exons.join(parents, on=key, how="inner"),
        (pl.col("chrom") != pl.col("parent_chrom"))
        | (pl.col("start") < pl.col("parent_start"))
        | (pl.col("end") > pl.col("parent_end")),
    )
    if row:
        raise InputError(
            path,
            f"line {row['line']}",
            f"exon {row['chrom']}:{row['start']}-{row['end']} lies outside its {role} '{row[key]}' "
            f"(line {row['parent_line']}: {row['parent_chrom']}:{row['parent_start']}-{row['parent_end']})",
        )


def check_inside_chromosomes(exons: pl.DataFrame, chrom_lengths: dict[str, int], path) -> None:
    lengths = pl.DataFrame(
        {"chrom": list(chrom_lengths), "chrom_length": list(chrom_lengths.values())},
        schema={"chrom": pl.String, "chrom_length": pl.Int64},
    )
    row = first_by_line(exons.join(lengths, on="chrom", how="inner"), pl.col("end") > pl.col("chrom_length"))
    if row:
        raise InputError(
            path,
            f"line {row['line']}",
            f"exon ends at {row['end']:,}, past the end of chromosome '{row['chrom']}' "
            f"({row['chrom_length']:,} nt); is this the genome it annotates?",
        )
