"""The `score_base_model` rule: a SpliceAI-family ensemble's donor/acceptor probabilities at every
position of every gene of one shard (see workflow_scripts/calling/scoring.py and shards.py).

`--weights`: the base models, SpliceAI .h5 or OpenSpliceAI .pt (files, or a directory of them), from calling.base_model.weights.
`--config` holds the section calling (its base_model keys: batch_size, chunk_length, device).
`--shard I --shards N` (1-based): score the I-th of N shards; 1 of 1 (the default) scores every gene.
CPU threads: torch takes OMP_NUM_THREADS, which Snakemake sets to the rule's threads.
`--console-fd`: progress on Snakemake's console every 30 s (workflow_scripts/progress.py).
"""

from __future__ import annotations

import argparse
import sys

import torch

from workflow_scripts.calling.regions import read_genes
from workflow_scripts.calling.scoring import score_genes
from workflow_scripts.calling.shards import shard_record, shard_regions
from workflow_scripts.calling.spliceai import load_ensemble
from workflow_scripts.config.sections import add_config_argument, parse_rule_config
from workflow_scripts.data.fasta import open_genome
from workflow_scripts.errors import InputError, run_cli
from workflow_scripts.io_utils import write_json
from workflow_scripts.progress import Console, add_console_argument

SECTIONS = ("calling",)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--genes", required=True, help="gene spans (genes.parquet: gene_id, chrom, start, end, strand)"
    )
    parser.add_argument(
        "--genome", required=True, help="genome index directory (index_genome) or a FASTA file"
    )
    parser.add_argument(
        "--weights",
        required=True,
        nargs="+",
        help="SpliceAI .h5 or OpenSpliceAI .pt models, or one directory of them",
    )
    parser.add_argument("--out-scores", required=True, help="output scores parquet")
    parser.add_argument(
        "--out-regions", help="the shard's record: its shard and regions (JSON; calling/shards.py)"
    )
    parser.add_argument("--shard", type=int, default=1, help="which shard to score, 1..--shards")
    parser.add_argument("--shards", type=int, default=1, help="how many shards the genes are split into")
    add_console_argument(parser)
    add_config_argument(parser, *SECTIONS)
    return parser.parse_args(argv)


def check_shard(shard: int, shards: int) -> None:
    if shards < 1 or not 1 <= shard <= shards:
        raise InputError("--shard", str(shard), f"not a shard of 1..{shards} (--shards {shards})")


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    check_shard(args.shard, args.shards)
    settings = parse_rule_config(args.config, required=SECTIONS)["calling"]["base_model"]
    ensemble = load_ensemble(args.weights[0] if len(args.weights) == 1 else args.weights)
    genome = open_genome(args.genome)
    genes = read_genes(args.genes, genome)
    print(
        f"score_base_model: {ensemble.count_text} ({ensemble.family}) from {', '.join(ensemble.sources)}; "
        f"{torch.get_num_threads()} CPU threads",
        file=sys.stderr,
    )
    shard = (args.shard, args.shards)
    score_genes(
        ensemble, genome, genes, args.out_scores, settings, shard=shard, console=Console(args.console_fd)
    )
    if args.out_regions:  # what the readers check this table against (a shard copied over another)
        regions = shard_regions(genes, genome, ensemble.context, *shard)
        write_json(args.out_regions, shard_record(regions, genome, *shard))


if __name__ == "__main__":
    run_cli(main)
