"""What each peer's batches do to learning: the same BERT, one bare loop, only the batches differ.

    python -m benchmarks.peers.order [--seeds 0 1 2] [--epochs 1] [--work-dir DIR]   # after or without compare.py

On the demo windows (benchmarks/peers/compare.py's data and model), one process and thread, one epoch of
each peer's global batches (both ranks' slices joined: DDP averages their gradients alike), the
same AdamW, warm-up + cosine schedule, clipping and LR as compare.py, then the test ROC-AUC (runs.py's
scorer). Batches: errorseq's sampler (2 ranks) on the bucket rule's buckets and on the
n_buckets (8) buckets it took before bucket.target_efficiency had a default, transformers'
LengthGroupedSampler (2 ranks, the Trainer's batch size), the MetaSpliceAI recipe (2 ranks x its
accumulation), random. Each step's fraction of error windows shows how far a scheme's batches
drift from the class mix. With --epochs N, N epochs of each (a new order every epoch).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import torch

from benchmarks.peers.batching import MAX_TOKENS, RecipeBatchSampler, errorseq_batches, plans
from benchmarks.peers.inputs import prepare, work_folder
from benchmarks.peers.runs import Launch, test_roc_auc
from benchmarks.tables import print_table
from workflow_scripts.bucketing.assign import assign_buckets
from workflow_scripts.bucketing.boundaries import batch_sizes_for_budget, optimal_boundaries
from workflow_scripts.training.batches import load_split

WORLD = 2
KINDS = (
    "errorseq's sampler",
    "errorseq's sampler, 8 buckets",
    "Trainer, group_by_length",
    "MetaSpliceAI recipe",
    "random batches",
)


def global_batches(kind: str, data: dict, plan: dict, seed: int, epoch: int = 0) -> list[list[int]]:
    from transformers.trainer_pt_utils import get_length_grouped_indices

    summary = json.loads(Path(data["summary"]).read_text())
    train = load_split(data["windows"], data["manifest"], "train")
    if kind.startswith("errorseq"):
        buckets, sizes = train.buckets, summary["batch_sizes"]
        if kind.endswith("8 buckets"):
            boundaries = optimal_boundaries(train.token_lengths, 8)
            buckets = assign_buckets(train.token_lengths, boundaries)
            sizes = batch_sizes_for_budget(boundaries, summary["max_tokens_per_batch"], MAX_TOKENS)
        steps = errorseq_batches(buckets, sizes, train.token_lengths, WORLD, seed, epoch)
        return [[i for part in step for i in part] for step in steps]
    per_step = WORLD * plan["trainer"]["batch_size"]
    if kind == "Trainer, group_by_length":
        generator = torch.Generator().manual_seed(seed * 1000 + epoch)
        order = get_length_grouped_indices(
            train.token_lengths.tolist(), per_step // WORLD, generator=generator
        )
    elif kind == "MetaSpliceAI recipe":
        micro = RecipeBatchSampler(train.token_lengths, seed * 1000 + epoch).batches()
        group = WORLD * plan["recipe"]["accumulation"]
        return [[i for batch in micro[s : s + group] for i in batch] for s in range(0, len(micro), group)]
    else:
        order = np.random.default_rng((seed, epoch)).permutation(len(train)).tolist()
    return [list(order[s : s + per_step]) for s in range(0, len(order), per_step)]


def train_once(batches: list[list[int]], data: dict, model_dir: Path, launch: Launch, seed: int) -> float:
    from transformers import (
        AutoModelForSequenceClassification,
        AutoTokenizer,
        get_cosine_with_min_lr_schedule_with_warmup,
    )

    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    train = load_split(data["windows"], data["manifest"], "train")
    ids = tokenizer(train.sequences)["input_ids"]
    torch.manual_seed(seed)
    model = AutoModelForSequenceClassification.from_pretrained(str(model_dir), num_labels=2)
    optimizer = torch.optim.AdamW(model.parameters(), lr=launch.lr, betas=(0.9, 0.98), weight_decay=0.01)
    warmup = max(1, round(0.1 * len(batches)))
    schedule = get_cosine_with_min_lr_schedule_with_warmup(optimizer, warmup, len(batches), min_lr_rate=0.05)
    for batch in batches:
        padded = tokenizer.pad({"input_ids": [ids[i] for i in batch]}, return_tensors="pt")
        labels = torch.as_tensor(train.labels[batch], dtype=torch.long)
        model(**padded, labels=labels).loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad(set_to_none=True)
    return test_roc_auc(model, model_dir, data["windows"])


def order_rows(
    data: dict, model_dir: Path, launch: Launch, plan: dict, seeds: list[int], epochs: int
) -> list[list]:
    labels = load_split(data["windows"], data["manifest"], "train").labels
    rows = []
    for kind in KINDS:
        scores, spread = [], []
        for seed in seeds:
            batches = [b for epoch in range(epochs) for b in global_batches(kind, data, plan, seed, epoch)]
            spread.append(float(np.std([labels[b].mean() for b in batches])))
            scores.append(train_once(batches, data, model_dir, launch, seed))
            print(
                f"peer_order: {kind}, seed {seed}: {len(batches)} steps, ROC-AUC {scores[-1]:.3f}", flush=True
            )
        rows.append(
            [
                kind,
                len(batches),
                f"{np.mean(spread):.3f}",
                *(f"{s:.3f}" for s in scores),
                f"{np.mean(scores):.3f} ± {np.std(scores, ddof=1) if len(scores) > 1 else 0:.3f}",
                f"{min(scores):.3f}",
            ]
        )
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--epochs", type=int, default=1, help="epochs of each peer's batches")
    parser.add_argument("--quick", action="store_true", help="peers' tiny data")
    parser.add_argument("--work-dir", default="/tmp/errorseq-bench/peers")
    args = parser.parse_args(argv)
    model_dir, (data,) = prepare(work_folder(args.work_dir, args.quick), args.quick, ["demo"])
    launch = Launch(WORLD, 1)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        plan = plans(data, launch.ranks, launch.seed, launch.epochs)
        rows = order_rows(data, model_dir, launch, plan, args.seeds, args.epochs)
    finally:
        torch.set_num_threads(threads)
    print_table(
        f"Batches and learning: the same BERT, one bare loop, {args.epochs} epoch(s) of each peer's "
        "global batches (demo)",
        [
            "batches",
            "steps",
            "sd of the error fraction per step",
            *(f"seed {s}" for s in args.seeds),
            "mean ± sd",
            "worst",
        ],
        rows,
    )


if __name__ == "__main__":
    main()
