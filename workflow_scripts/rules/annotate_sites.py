"""The `annotate_sites` rule: a GTF/GFF3 annotation -> sites.parquet and genes.parquet.

`--config` holds the keys of `calling` its declaration reads (config/stages/annotate_sites.py; the workflow
passes only those, so a new threshold does not re-annotate). `--genome` is the genome
index directory (index_genome) or a FASTA: chromosome names are checked against it and the log
reports the share of donors with GT and acceptors with AG (docs/calling.md, conventions).
"""

from __future__ import annotations

import sys
import time

from workflow_scripts.calling.annotation import Region, build_site_tables
from workflow_scripts.calling.genome_checks import canonical_fractions, check_chromosomes, check_inside
from workflow_scripts.calling.gff import read_annotation
from workflow_scripts.config.stages.annotate_sites import STAGE
from workflow_scripts.config.types import CallingSection
from workflow_scripts.data.fasta import open_genome
from workflow_scripts.errors import run_cli
from workflow_scripts.evaluation.records import file_record
from workflow_scripts.io_utils import write_json, write_parquet

LOW_CANONICAL_SHARE = 0.9


def main(argv: list[str] | None = None) -> None:
    paths, cfg = STAGE.parse(argv)
    calling: CallingSection = cfg.calling
    began = time.perf_counter()
    genome = open_genome(paths.genome)
    region = Region.parse(calling.region) if calling.region else None
    tables = build_site_tables(
        read_annotation(paths.annotation),
        calling.biotypes,
        calling.transcripts,
        region,
        genome.chrom_lengths(),
    )
    check_chromosomes(tables.genes, genome, paths.annotation)
    check_inside(tables.genes, genome, paths.annotation, "start", "end")
    shares = canonical_fractions(tables.sites, genome)
    summary = {
        **tables.summary,
        "donor_GT": round(shares["donor"], 4),
        "acceptor_AG": round(shares["acceptor"], 4),
        "region": calling.region,  # provenance travels with the data (evaluation/records.py)
        "annotation": file_record(paths.annotation),
    }
    write_parquet(tables.sites, paths.out_sites)
    write_parquet(tables.genes, paths.out_genes)
    if paths.out_exons:
        write_parquet(tables.exons, paths.out_exons)
    if paths.out_summary:
        write_json(paths.out_summary, summary)
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
