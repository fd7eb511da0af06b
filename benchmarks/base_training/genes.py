"""The genes both sides train and are tested on, and the annotation OpenSpliceAI can read.

Genes: protein-coding genes with an intron, read by errorseq's own annotation reader (GTF or GFF3,
any source), shuffled by a seed and dealt to test, validation and train; each split gets at least
its number of genes and at least one full batch of OpenSpliceAI windows (its loaders drop the last
incomplete batch, and an empty split crashes its end-of-epoch metrics).

OpenSpliceAI's `create-data` reads RefSeq-style GFF3 only (`gene_biotype=protein_coding` on the
gene, `mRNA` children; its issue #7: another GFF gives KeyError 'gene_biotype' or an empty set).
So each split is written as a minimal GFF3 of that shape (gene, mRNA, exon; every transcript of
the gene, spans as annotated): `create-data` then chooses its own transcript (the longest) from
any annotation errorseq reads.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from urllib.parse import quote

import numpy as np
import polars as pl

from benchmarks.base_training.layout import batch_size, windows
from workflow_scripts.calling.annotation import exon_frame, gene_frame
from workflow_scripts.calling.gff import Annotation, read_annotation
from workflow_scripts.errors import InputError
from workflow_scripts.io_utils import write_json, write_text

SPLITS = ("train", "validation", "test")


@dataclass(frozen=True)
class GeneSplit:
    """Gene ids per split, each in annotation order (chromosome, start)."""

    train: tuple[str, ...]
    validation: tuple[str, ...]
    test: tuple[str, ...]

    def of(self, split: str) -> tuple[str, ...]:
        return getattr(self, split)

    def save(self, path: Path) -> None:
        write_json(path, {split: list(self.of(split)) for split in SPLITS})

    @classmethod
    def load(cls, path: Path) -> GeneSplit:
        data = json.loads(Path(path).read_text())
        missing = [split for split in SPLITS if not isinstance(data.get(split), list)]
        if missing:
            raise InputError(path, missing[0], "missing: a gene split names train, validation and test")
        return cls(*(tuple(data[split]) for split in SPLITS))


@dataclass(frozen=True)
class Request:
    train_genes: int
    validation_genes: int
    test_genes: int
    flank: int
    seed: int
    chrom: str | None = None


def candidate_genes(annotation: Annotation, chrom: str | None) -> pl.DataFrame:
    """Protein-coding genes with at least one intron: gene_id, chrom, start, end, strand, length."""
    exons = exon_frame(annotation)
    with_intron = exons.group_by("transcript_id", "gene_id").len().filter(pl.col("len") > 1)
    genes = (
        gene_frame(annotation, exons)
        .filter(pl.col("biotype") == "protein_coding")
        .join(with_intron.select("gene_id").unique(), on="gene_id", how="semi")
        .with_columns((pl.col("end") - pl.col("start") + 1).alias("length"))
    )
    if chrom is not None:
        genes = genes.filter(pl.col("chrom") == chrom)
    if genes.height == 0:
        where = f" on {chrom}" if chrom else ""
        raise InputError(annotation.path, "gene", f"no protein-coding gene with an intron{where}")
    return genes.sort("chrom", "start", "gene_id")


def deal(genes: pl.DataFrame, request: Request, source: str) -> GeneSplit:
    """Shuffle by the seed, then fill test, validation and train in turn: each to its number of
    genes and at least one batch of windows."""
    batch = batch_size(request.flank)
    order = np.random.default_rng(request.seed).permutation(genes.height)
    ids, lengths = genes["gene_id"].to_list(), genes["length"].to_list()
    dealt: dict[str, list[int]] = {}
    cursor = 0
    for split, wanted in (
        ("test", request.test_genes),
        ("validation", request.validation_genes),
        ("train", request.train_genes),
    ):
        chosen: list[int] = []
        while len(chosen) < wanted or sum(windows(lengths[i]) for i in chosen) < batch:
            if cursor == len(order):
                raise InputError(
                    source,
                    "gene",
                    f"{genes.height} protein-coding genes with an intron are too few for {split}: each "
                    f"split needs its genes and at least {batch} windows (one batch at flank {request.flank})",
                )
            chosen.append(int(order[cursor]))
            cursor += 1
        dealt[split] = sorted(chosen)  # annotation order
    return GeneSplit(*(tuple(ids[i] for i in dealt[split]) for split in SPLITS))


def choose_split(annotation_path: Path, request: Request) -> tuple[GeneSplit, pl.DataFrame]:
    """The split and the candidate genes table (lengths for the layout)."""
    annotation = read_annotation(annotation_path)
    genes = candidate_genes(annotation, request.chrom)
    return deal(genes, request, str(annotation_path)), genes


def attribute(value: str) -> str:
    return quote(value, safe=" :|.-_/")  # GFF3 reserves ; = & , and tabs


def refseq_style_gff(annotation: Annotation, gene_ids: tuple[str, ...]) -> str:
    """A GFF3 that OpenSpliceAI's `create-data` reads: gene (gene_biotype=protein_coding), mRNA,
    exon, for these genes and every transcript of theirs."""
    exons = exon_frame(annotation).filter(pl.col("gene_id").is_in(list(gene_ids)))
    genes = gene_frame(annotation, exons).sort("chrom", "start", "gene_id")
    lines = ["##gff-version 3"]
    for gene in genes.iter_rows(named=True):
        gene_id = attribute(gene["gene_id"])
        lines.append(
            f"{gene['chrom']}\terrorseq\tgene\t{gene['start']}\t{gene['end']}\t.\t{gene['strand']}\t.\t"
            f"ID={gene_id};gene_biotype=protein_coding"
        )
        mine = exons.filter(pl.col("gene_id") == gene["gene_id"]).sort("transcript_id", "start")
        for (transcript,), rows in mine.group_by("transcript_id", maintain_order=True):
            declared = annotation.transcript_spans.get(str(transcript))
            start = declared[1] if declared else int(rows["start"].min())  # type: ignore[arg-type]
            end = declared[2] if declared else int(rows["end"].max())  # type: ignore[arg-type]
            transcript_id = attribute(str(transcript))
            lines.append(
                f"{gene['chrom']}\terrorseq\tmRNA\t{start}\t{end}\t.\t{gene['strand']}\t.\t"
                f"ID={transcript_id};Parent={gene_id}"
            )
            for number, exon in enumerate(rows.iter_rows(named=True), 1):
                lines.append(
                    f"{gene['chrom']}\terrorseq\texon\t{exon['start']}\t{exon['end']}\t.\t{gene['strand']}\t.\t"
                    f"ID={transcript_id}-exon{number};Parent={transcript_id}"
                )
    return "\n".join(lines) + "\n"


def write_split_annotations(annotation_path: Path, split: GeneSplit, folder: Path) -> dict[str, Path]:
    """One GFF3 per split in `folder`: {split: path}."""
    annotation = read_annotation(annotation_path)
    paths = {}
    for name in SPLITS:
        paths[name] = folder / f"{name}.gff3"
        write_text(paths[name], refseq_style_gff(annotation, split.of(name)))
    return paths


def lengths_of(genes: pl.DataFrame, gene_ids: tuple[str, ...]) -> list[int]:
    """Gene spans (nt) in the order given."""
    length = dict(zip(genes["gene_id"].to_list(), genes["length"].to_list()))
    return [int(length[gene]) for gene in gene_ids]


def request_record(request: Request) -> dict:
    return asdict(request)
