"""The declaration of the rule base_data (config/stage.py); its program: rules/base_data.py."""

from __future__ import annotations

from workflow_scripts.config.stage import Input, Output, Stage
from workflow_scripts.config.stages.shared import CONSOLE, GENE_CLUSTERS, GENES, SITES

STAGE = Stage(
    "base_data",
    "The annotation's genes as blocks of real DNA and site labels for training the base model.",
    inputs=(
        SITES,
        GENES,
        GENE_CLUSTERS,
        Input("annotation", "the annotation annotate_sites read (its name and sha256 in the manifest)"),
        Input("fasta", "the genome FASTA index_genome read (its name and sha256 in the manifest)"),
    ),
    outputs=(
        Output("blocks", "blocks.parquet: one row per block (BASE_DATA_CONTRACT.md)"),
        Output("sequence", "sequence.npy: the blocks' bases, flat, A0 C1 G2 T3 N4"),
        Output("labels", "labels.npy: -1 flank, 0 neither, 1 acceptor, 2 donor"),
        Output("manifest", "manifest.json: settings, provenance, counts and layout statistics"),
    ),
    config={
        "base_data": (
            "context",
            "max_core",
            "merge_gap",
            "split",
            "fractions",
            "test_chromosomes",
            "validation_chromosomes",
            "seed",
            "canonical_only",
            "folds",
            "fold",
        )
    },
    options=(CONSOLE,),
    genome=True,
)
