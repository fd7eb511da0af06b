"""The `annotate_sites` rule: a GTF/GFF3 annotation -> sites.parquet and genes.parquet.

`--config` holds the `calling` section; this rule reads the keys ANNOTATE_SITES_KEYS of
calling/contract.py (the workflow passes only those, so a new threshold does not re-annotate). `--genome` is the genome
index directory (index_genome) or a FASTA: chromosome names are checked against it and the log
reports the share of donors with GT and acceptors with AG (docs/calling.md, conventions).
"""

from __future__ import annotations

import argparse
import sys
import time

from workflow_scripts.calling.annotation import Region, build_site_tables
from workflow_scripts.calling.genome_checks import canonical_fractions, check_chromosomes, check_inside
from workflow_scripts.calling.gff import read_annotation
from workflow_scripts.config.sections import add_config_argument
from workflow_scripts.config.types import CallingSection, parse_typed_config
from workflow_scripts.data.fasta import open_genome
from workflow_scripts.errors import run_cli
from workflow_scripts.io_utils import write_json, write_parquet

LOW_CANONICAL_SHARE = 0.9


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--annotation", required=True, help="GTF or GFF3, plain or gzip")
    parser.add_argument(
        "--genome", required=True, help="genome index directory (index_genome) or a FASTA file"
    )
    parser.add_argument("--out-sites", required=True, help="sites parquet")
    parser.add_argument("--out-genes", required=True, help="gene spans parquet")
    parser.add_argument(
        "--out-exons", help="the selected transcripts' exons (parquet; cluster_genes reads it)"
    )
    parser.add_argument("--out-summary", help="counts and GT/AG shares (JSON)")
    add_config_argument(parser, "calling")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    calling: CallingSection = parse_typed_config(args.config, required=("calling",))["calling"]
    began = time.perf_counter()
    genome = open_genome(args.genome)
    region = Region.parse(calling.region) if calling.region else None
    tables = build_site_tables(
        read_annotation(args.annotation),
        calling.biotypes,
        calling.transcripts,
        region,
        genome.chrom_lengths(),
    )
    check_chromosomes(tables.genes, genome, args.annotation)
    check_inside(tables.genes, genome, args.annotation, "start", "end")
    shares = canonical_fractions(tables.sites, genome)
    summary = {
        **tables.summary,
        "donor_GT": round(shares["donor"], 4),
        "acceptor_AG": round(shares["acceptor"], 4),
    }
    write_parquet(tables.sites, args.out_sites)
    write_parquet(tables.genes, args.out_genes)
    if args.out_exons:
        write_parquet(tables.exons, args.out_exons)
    if args.out_summary:
        write_json(args.out_summary, summary)
    print(
        f"annotate_sites: {summary['genes']:,} genes, {summary['transcripts']:,} transcripts, "
        f"{summary['donors']:,} donors ({shares['donor']:.1%} GT), {summary['acceptors']:,} acceptors "
        f"({shares['acceptor']:.1%} AG); {summary['shared_by_genes']} sites shared by overlapping genes kept once; "
        f"{time.perf_counter() - began:.1f} s",
        file=sys.stderr,
    )
    if min(shares.values()) < LOW_CANONICAL_SHARE:
        print(
            "annotate_sites: warning: few canonical dinucleotides at the sites; does the annotation belong to "
            "this genome assembly?",
            file=sys.stderr,
        )


if __name__ == "__main__":
    run_cli(main)
