"""Annotated splice sites and gene spans from a GTF or GFF3 annotation.

Coordinate convention (1-based, forward-strand genome coordinates, like the annotation):

* a **donor** is the last exon base before an intron, read in the transcript's direction;
* an **acceptor** is the first exon base after an intron.

So on the + strand a donor is an exon's `end` and an acceptor the next exon's `start`; on the
- strand (transcript runs right to left) a donor is an exon's `start` and an acceptor the end of
the exon to its left. The canonical dinucleotides sit in the intron next to those bases: GT at
donor+1..donor+2 (+) or AC at donor-2..donor-1 (-, reverse complement of GT), AG at
acceptor-2..acceptor-1 (+) or CT at acceptor+1..acceptor+2 (-). This is the exon-boundary
convention of SpliceAI's training labels, so a base model's donor/acceptor peak falls on the
site's own position. `calling.motifs` reads the dinucleotides.

Selection: genes of the chosen biotypes (`all` keeps every gene), optionally inside one region,
and their transcripts: `all`, `first` (the gene's first transcript in file order) or `canonical`
(tagged Ensembl_canonical, MANE Select or RefSeq Select; genes with no tagged transcript fall back
to their first). A site shared by several transcripts or overlapping genes is one row: its gene is
the smallest gene_id among them (string order), its transcript the smallest transcript_id of that
gene; `n_transcripts` counts the selected transcripts that share it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import polars as pl

from workflow_scripts.calling.contract import GENE_COLUMNS, SITE_COLUMNS
from workflow_scripts.calling.geometry import check_exon_geometry
from workflow_scripts.calling.gff import Annotation
from workflow_scripts.data.call_table import name_hint
from workflow_scripts.errors import InputError

REGION = re.compile(r"^(?P<chrom>[^:]+)(?::(?P<start>[\d,]+)-(?P<end>[\d,]+))?$")


@dataclass(frozen=True)
class Region:
    chrom: str
    start: int = 1
    end: int | None = None

    @classmethod
    def parse(cls, text: str) -> Region:
        match = REGION.match(text.strip())
        if not match:
            raise InputError("config", "calling.region", f"expected chrom or chrom:start-end (got {text!r})")
        if match["start"] is None:
            return cls(match["chrom"])
        start, end = (int(match[k].replace(",", "")) for k in ("start", "end"))
        if not 1 <= start <= end:
            raise InputError("config", "calling.region", f"need 1 <= start <= end (got {text!r})")
        return cls(match["chrom"], start, end)


@dataclass
class SiteTables:
    sites: pl.DataFrame
    genes: pl.DataFrame
    summary: dict
    exons: pl.DataFrame  # the selected transcripts' exons: gene_id, chrom, start, end, strand


def exon_frame(annotation: Annotation) -> pl.DataFrame:
    exons = pl.DataFrame(
        annotation.exons,
        schema=["chrom", "start", "end", "strand", "transcript_id", "line"],
        orient="row",
        schema_overrides={"start": pl.Int64, "end": pl.Int64},
    )
    transcripts = pl.DataFrame(
        {
            "transcript_id": list(annotation.transcripts),
            "gene_id": [t["gene_id"] for t in annotation.transcripts.values()],
            "order": [t["order"] for t in annotation.transcripts.values()],
            "canonical": [t["canonical"] for t in annotation.transcripts.values()],
        },
        schema={"transcript_id": pl.String, "gene_id": pl.String, "order": pl.Int64, "canonical": pl.Boolean},
    )
    return exons.join(transcripts, on="transcript_id", how="left")


def check_exon_strands(exons: pl.DataFrame, path: str) -> None:
    bad = exons.filter(~pl.col("strand").is_in(["+", "-"])).head(1)
    if bad.height:
        raise InputError(
            path,
            f"line {bad['line'][0]} strand",
            f"exon strand must be '+' or '-' (got {bad['strand'][0]!r})",
        )
    mixed = (
        exons.group_by("transcript_id")
        .agg(
            pl.col("chrom").n_unique().alias("c"),
            pl.col("strand").n_unique().alias("s"),
            pl.col("line").min(),
        )
        .filter((pl.col("c") > 1) | (pl.col("s") > 1))
        .sort("line")
        .head(1)
    )
    if mixed.height:
        raise InputError(
            path, f"transcript '{mixed['transcript_id'][0]}'", "exons on more than one chromosome or strand"
        )


def gene_frame(annotation: Annotation, exons: pl.DataFrame) -> pl.DataFrame:
    """One row per gene with exons: span from its gene feature (else its exons), biotype."""
    extent = exons.group_by("gene_id").agg(
        pl.col("chrom").first(),
        pl.col("strand").first(),
        pl.col("start").min().alias("exon_start"),
        pl.col("end").max().alias("exon_end"),
        pl.col("transcript_id").is_in(list(annotation.coding)).any().alias("has_cds"),
    )
    declared = pl.DataFrame(
        {
            "gene_id": list(annotation.genes),
            "start": [g["start"] for g in annotation.genes.values()],
            "end": [g["end"] for g in annotation.genes.values()],
            "biotype": [g["biotype"] for g in annotation.genes.values()],
        },
        schema={"gene_id": pl.String, "start": pl.Int64, "end": pl.Int64, "biotype": pl.String},
    )
    fallback = pl.when(pl.col("has_cds")).then(pl.lit("protein_coding")).otherwise(pl.lit("unknown"))
    return (
        extent.join(declared, on="gene_id", how="left")
        .with_columns(
            pl.coalesce("start", "exon_start").alias("start"),
            pl.coalesce("end", "exon_end").alias("end"),
            pl.coalesce("biotype", fallback).alias("biotype"),
        )
        .select(GENE_COLUMNS)
        .sort("chrom", "start", "gene_id")
    )


def select_genes(genes: pl.DataFrame, biotypes, region: Region | None, path: str) -> pl.DataFrame:
    chosen = genes if biotypes == "all" else genes.filter(pl.col("biotype").is_in(list(biotypes)))
    if chosen.height == 0:
        found = ", ".join(sorted(genes["biotype"].unique().to_list())[:8])
        raise InputError(
            path,
            "biotype",
            f"no gene of biotype {', '.join(biotypes)} (found: {found}); "
            "set calling.biotypes to one of them, or all",
        )
    if region is not None:
        end = region.end if region.end is not None else np.iinfo(np.int64).max
        chosen = chosen.filter(
            (pl.col("chrom") == region.chrom) & (pl.col("start") >= region.start) & (pl.col("end") <= end)
        )
        if chosen.height == 0:
            raise InputError(
                path,
                "calling.region",
                f"no selected gene lies inside {region.chrom}:{region.start}-{region.end or 'end'}"
                f"{region_hint(region.chrom, genes)}",
            )
    return chosen


def region_hint(chrom: str, genes: pl.DataFrame) -> str:
    names = genes["chrom"].unique(maintain_order=True).to_list()
    return "" if chrom in names else name_hint(chrom, names)


def select_transcripts(exons: pl.DataFrame, choice: str) -> tuple[pl.DataFrame, int]:
    """Exons of the chosen transcripts, and how many genes fell back to their first transcript."""
    if choice == "all":
        return exons, 0
    per_gene = exons.group_by("gene_id").agg(
        pl.col("order").min().alias("first"),
        pl.col("order").filter(pl.col("canonical")).min().alias("tagged"),
    )
    fallbacks = 0
    if choice == "canonical":
        fallbacks = per_gene["tagged"].null_count()
        per_gene = per_gene.with_columns(pl.coalesce("tagged", "first").alias("first"))
    keep = per_gene.select("gene_id", pl.col("first").alias("order"))
    return exons.join(keep, on=["gene_id", "order"], how="semi"), fallbacks


def transcript_sites(exons: pl.DataFrame) -> tuple[pl.DataFrame, int]:
    """Donor and acceptor of every intron (gap between consecutive exons of a transcript, which do
    not overlap: calling/geometry.py), and how many exon pairs abut (no intron between them)."""
    pairs = (
        exons.sort("transcript_id", "start", "end")
        .with_columns(pl.col("start").shift(-1).over("transcript_id").alias("next_start"))
        .filter(pl.col("next_start").is_not_null())
    )
    abutting = pairs.filter(pl.col("next_start") == pl.col("end") + 1).height
    introns = pairs.filter(pl.col("next_start") > pl.col("end") + 1)
    plus = pl.col("strand") == "+"
    keys = ("gene_id", "transcript_id", "chrom", "strand")
    donors = introns.select(
        *keys,
        pl.when(plus).then(pl.col("end")).otherwise(pl.col("next_start")).alias("position"),
        pl.lit("donor").alias("splice_type"),
    )
    acceptors = introns.select(
        *keys,
        pl.when(plus).then(pl.col("next_start")).otherwise(pl.col("end")).alias("position"),
        pl.lit("acceptor").alias("splice_type"),
    )
    return pl.concat([donors, acceptors]), abutting


def deduplicate_sites(sites: pl.DataFrame) -> pl.DataFrame:
    """One row per (chrom, position, strand, splice_type): smallest gene_id, then transcript_id."""
    key = ["chrom", "position", "strand", "splice_type"]
    counted = sites.with_columns(pl.len().over(key).alias("n_transcripts").cast(pl.Int32))
    return (
        counted.sort(*key, "gene_id", "transcript_id")
        .unique(subset=key, keep="first", maintain_order=True)
        .select(*SITE_COLUMNS, "n_transcripts")
        .with_columns(pl.col("position").cast(pl.Int64))
        .sort("chrom", "position", "strand", "splice_type")
    )


def build_site_tables(
    annotation: Annotation,
    biotypes="all",
    transcripts: str = "all",
    region: Region | None = None,
    chrom_lengths: dict[str, int] | None = None,
) -> SiteTables:
    exons = exon_frame(annotation)
    check_exon_strands(exons, annotation.path)
    check_exon_geometry(annotation, exons, chrom_lengths)
    genes = select_genes(gene_frame(annotation, exons), biotypes, region, annotation.path)
    exons = exons.join(genes.select("gene_id"), on="gene_id", how="semi")
    chosen, fallbacks = select_transcripts(exons, transcripts)
    raw, abutting = transcript_sites(chosen)
    if raw.height == 0:
        raise InputError(
            annotation.path,
            "exon",
            f"none of the {chosen['transcript_id'].n_unique():,} selected transcripts has two exons: "
            "no intron, so no splice site (single-exon genes only?)",
        )
    sites = deduplicate_sites(raw)
    summary = {
        "format": annotation.kind,
        "genes": genes.height,
        "transcripts": chosen["transcript_id"].n_unique(),
        "transcript_sites": raw.height,
        "sites": sites.height,
        "donors": int((sites["splice_type"] == "donor").sum()),
        "acceptors": int((sites["splice_type"] == "acceptor").sum()),
        "shared_by_genes": int(
            raw.group_by("chrom", "position", "strand", "splice_type")
            .agg(pl.col("gene_id").n_unique().alias("n"))
            .filter(pl.col("n") > 1)
            .height
        ),
        "abutting_exons": abutting,
        "canonical_fallbacks": fallbacks,
    }
    return SiteTables(sites, genes, summary, chosen.select("gene_id", "chrom", "start", "end", "strand"))
