"""The `base_data` rule: the annotation's genes (annotate_sites, cluster_genes) and the genome
index -> the base model's training data, results/base_data/ (BASE_DATA_CONTRACT.md): blocks of
real DNA around each gene's span with donor/acceptor labels from every selected transcript, split
by gene clusters or chromosomes; the manifest holds the settings, the FASTA's and annotation's
names and sha256 (from the declared inputs), counts per split and the layout statistics beside
OpenSpliceAI's windows (base_training/layout_stats.py). `--console-fd`: progress on Snakemake's console.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import polars as pl

from workflow_scripts.base_training.dataset import (
    FORMAT,
    Settings,
    canonical_sites,
    layouts,
    open_base_data,
    plan_blocks,
    print_layouts,
    split_counts,
    write_arrays,
    write_blocks,
)
from workflow_scripts.calling.contract import GENE_COLUMNS, SITE_COLUMNS
from workflow_scripts.calling.genome_checks import check_chromosomes, check_inside
from workflow_scripts.config.stages.base_data import STAGE
from workflow_scripts.config.types import BaseDataSection
from workflow_scripts.data.fasta import open_genome
from workflow_scripts.data.tables import read_table
from workflow_scripts.errors import InputError, run_cli
from workflow_scripts.io_utils import sha256_file, write_json
from workflow_scripts.progress import Console, announce


def settings_of(section: BaseDataSection) -> Settings:
    return Settings(
        context=section.context,
        max_core=section.max_core,
        merge_gap=section.merge_gap,
        split=section.split,
        fractions=section.fractions.to_dict(),
        test_chromosomes=list(section.test_chromosomes),
        validation_chromosomes=list(section.validation_chromosomes),
        seed=section.seed,
        canonical_only=section.canonical_only,
        folds=section.folds,
        fold=section.fold,
    )


def file_facts(path: str) -> dict[str, str]:
    return {"name": Path(path).name, "sha256": sha256_file(path)}


def main(argv: list[str] | None = None) -> None:
    paths, cfg = STAGE.parse(argv)
    settings = settings_of(cfg.base_data)
    began = time.perf_counter()
    console = Console(paths.console_fd)
    announce(console, "base_data", "the annotation's genes -> blocks for the base model")
    genome = open_genome(paths.genome)
    genes = read_table(paths.genes, required=GENE_COLUMNS).with_columns(pl.col("start", "end").cast(pl.Int64))
    sites = read_table(paths.sites, required=SITE_COLUMNS).with_columns(pl.col("position").cast(pl.Int64))
    clusters = read_table(paths.gene_clusters, required=["gene_id", "gene_cluster"])
    if genes.height == 0:
        raise InputError(paths.genes, "rows", "no gene: nothing to make blocks of")
    check_chromosomes(genes, genome, paths.genes, "column 'chrom'")
    check_inside(genes, genome, paths.genes, "start", "end")
    dropped = 0
    if settings.canonical_only:
        kept = canonical_sites(sites, genome)
        dropped, sites = sites.height - kept.height, kept
    blocks = plan_blocks(genes, clusters, genome, settings)
    counts = write_arrays(blocks, sites, genome, settings, paths, console)
    write_blocks(blocks, paths.out_blocks)
    data = open_base_data(paths.out_blocks, paths.out_sequence, paths.out_labels)
    stats = layouts(blocks, genes, settings, counts["padding_nt"] + counts["masked_nt"])
    manifest: dict[str, Any] = {
        "format": FORMAT,
        "context": settings.context,
        "half_context": settings.half_context,
        "max_core": settings.max_core,
        "merge_gap": settings.merge_gap,
        "canonical_only": settings.canonical_only,
        "genome": file_facts(paths.fasta),
        "annotation": file_facts(paths.annotation),
        "split": {
            "rule": settings.split,
            "seed": settings.seed,
            "fractions": settings.fractions,
            "test_chromosomes": settings.test_chromosomes,
            "validation_chromosomes": settings.validation_chromosomes,
            "folds": settings.folds,
            "fold": settings.fold,
        },
        "counts": split_counts(blocks, data.labels),
        "sites": {
            **{k: v for k, v in counts.items() if k.startswith("sites")},
            "non_canonical_dropped": dropped,
        },
        "padding_nt": counts["padding_nt"],
        "masked_nt": counts["masked_nt"],
        "layout": stats,
    }
    write_json(paths.out_manifest, manifest)
    print_layouts(stats)
    per_split = ", ".join(
        f"{name} {c['blocks']:,} blocks / {c['genes']:,} genes" for name, c in manifest["counts"].items()
    )
    line = (
        f"base_data: {blocks.height:,} blocks ({per_split}); {stats['errorseq']['input_per_labelled']:.2f} input nt "
        f"per labelled nt (OpenSpliceAI's windows {stats['openspliceai']['input_per_labelled']:.2f}); "
        f"{time.perf_counter() - began:.1f} s"
    )
    print(line, file=sys.stderr)
    console.say(line)


if __name__ == "__main__":
    run_cli(main)
