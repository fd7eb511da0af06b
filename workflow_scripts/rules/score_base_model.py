"""The `score_base_model` rule: a SpliceAI-family ensemble's donor/acceptor probabilities at every
position of every gene of one shard (see workflow_scripts/calling/scoring.py and shards.py).

`--weights`: the base models, SpliceAI .h5 or OpenSpliceAI .pt (files, or a directory of them), from calling.base_model.weights.
`--config` holds the section calling (its base_model keys: batch_size, chunk_length, precision,
device), which score_genes takes typed (config/types.py BaseModelSection).
`--shard I --shards N` (1-based): score the I-th of N shards; 1 of 1 (the default) scores every gene.
CPU threads: torch takes OMP_NUM_THREADS, which Snakemake sets to the rule's threads.
`--console-fd`: progress on Snakemake's console every 30 s (workflow_scripts/progress.py).
"""

from __future__ import annotations

import sys

import torch

from workflow_scripts.calling.model_files import weight_files
from workflow_scripts.calling.regions import read_genes
from workflow_scripts.calling.scoring import score_genes
from workflow_scripts.calling.shards import shard_record, shard_regions
from workflow_scripts.calling.spliceai import load_ensemble
from workflow_scripts.config.stages.score_base_model import STAGE
from workflow_scripts.data.fasta import open_genome
from workflow_scripts.errors import InputError, run_cli
from workflow_scripts.evaluation.records import weights_record
from workflow_scripts.io_utils import write_json
from workflow_scripts.progress import Console


def check_shard(shard: int, shards: int) -> None:
    if shards < 1 or not 1 <= shard <= shards:
        raise InputError("--shard", str(shard), f"not a shard of 1..{shards} (--shards {shards})")


def main(argv: list[str] | None = None) -> None:
    paths, cfg = STAGE.parse(argv)
    check_shard(paths.shard, paths.shards)
    spec = paths.weights[0] if len(paths.weights) == 1 else paths.weights  # a folder, or the files
    ensemble = load_ensemble(spec)
    genome = open_genome(paths.genome)
    genes = read_genes(paths.genes, genome)
    print(
        f"score_base_model: {ensemble.count_text} ({ensemble.family}) from {', '.join(ensemble.sources)}; "
        f"{torch.get_num_threads()} CPU threads",
        file=sys.stderr,
    )
    shard = (paths.shard, paths.shards)
    score_genes(
        ensemble,
        genome,
        genes,
        paths.out_scores,
        cfg.calling.base_model,
        shard=shard,
        console=Console(paths.console_fd),
    )
    if paths.out_regions:  # what the readers check this table against (a shard copied over another)
        regions = shard_regions(genes, genome, ensemble.context, *shard)
        record = shard_record(
            regions, genome, *shard
        )  # and the weights' facts: provenance travels with the data
        write_json(paths.out_regions, {**record, "weights": weights_record(weight_files(spec))})


if __name__ == "__main__":
    run_cli(main)
