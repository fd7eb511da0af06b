"""The declaration of the rule index_genome (config/stage.py); its program: rules/index_genome.py."""

from __future__ import annotations

from workflow_scripts.config.stage import WHOLE, Input, Output, Stage

STAGE = Stage(
    "index_genome",
    "A FASTA -> the genome index (sequence.npy and index.tsv).",
    inputs=(Input("fasta", "plain, gzip or bgzip FASTA"),),
    outputs=(
        Output("sequence", "output: the bases (sequence.npy)"),
        Output("index", "output: name, length, offset per chromosome (index.tsv)"),
        Output(
            "record",
            "output: the FASTA's name, bytes and sha256 (JSON; evaluation/records.py)",
            required=False,
        ),
    ),
    config={"index_genome": WHOLE},
)
