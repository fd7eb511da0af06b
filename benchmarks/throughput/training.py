"""Training on CPU: real tokens per second by batching scheme, and the trainer's overhead.

    python -m benchmarks.throughput.training [--n 768] [--batch-size 32] [--repeats 3]

Throughput: one epoch over the same long-tailed (log-normal 50-2000 tokens)
windows with the same model and a plain PyTorch loop; only the batching differs.
Overhead: errorseq's Trainer (DDP engine, world size 1, fp32, step log, end-of-
epoch checkpoint) against a bare loop doing the same maths (forward, cross-entropy,
backward, clip, AdamW) on the same batches from the same initial weights.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from benchmarks.inputs import lognormal_lengths
from benchmarks.tables import load_line, print_table
from workflow_scripts.bucketing.assign import assign_buckets, random_batches
from workflow_scripts.bucketing.boundaries import batch_sizes_for_budget, optimal_boundaries
from workflow_scripts.bucketing.sampler import DistributedBucketBatchSampler
from workflow_scripts.models.builtin import build_model
from workflow_scripts.tokenization.tokenizers import NucleotideTokenizer
from workflow_scripts.training.batches import BatchCollator, SplitData

MODEL = {"arch": "cnn", "d_model": 32, "n_layers": 3, "kernel_size": 9, "dropout": 0.1}  # the demo's model
MAX_TOKENS = 2048
TOKENIZER = NucleotideTokenizer(1)
TRAINER_SETTINGS = {  # the bare loop's maths: one epoch, constant LR, fp32, clipping
    "epochs": 1,
    "lr": 1e-3,
    "warmup_fraction": 0.0,
    "precision": "fp32",
    "grad_clip": 1.0,
    "checkpoint_every_steps": 10**9,
    "log_every_steps": 10,
    "seed": 0,
}


def synthetic_split(n: int, seed: int = 0) -> SplitData:
    rng = np.random.default_rng(seed)
    token_lengths = lognormal_lengths(n, seed)
    sequences = ["".join(rng.choice(list("ACGT"), length - 1)) for length in token_lengths]
    return SplitData(
        ids=[str(i) for i in range(n)],
        gene_ids=[str(i) for i in range(n)],
        sequences=sequences,
        labels=rng.integers(0, 2, n),
        lengths=token_lengths - 1,
        token_lengths=token_lengths,
        buckets=np.zeros(n, dtype=np.int64),
    )


def with_buckets(data: SplitData, boundaries: list[int]) -> SplitData:
    return SplitData(**{**vars(data), "buckets": assign_buckets(data.token_lengths, boundaries)})


def fresh_model() -> torch.nn.Module:
    torch.manual_seed(0)
    return build_model(MODEL, TOKENIZER.vocab_size, MAX_TOKENS)


def bare_epoch(model, collator, batches, pad_to: int | None = None) -> tuple[float, int]:
    """A plain PyTorch loop; (seconds, real tokens). `pad_to` pads every batch to that width."""
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    model.train()
    real = 0
    began = time.perf_counter()
    for indices in batches:
        batch = collator(list(indices))
        ids, mask = batch["ids"], batch["mask"]
        if pad_to:
            ids, mask = F.pad(ids, (0, pad_to - ids.shape[1])), F.pad(mask, (0, pad_to - mask.shape[1]))
        loss = F.cross_entropy(model(ids, mask).float(), batch["labels"])
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        real += int(mask.sum())
    return time.perf_counter() - began, real


def throughput_rows(data: SplitData, batch_size: int, repeats: int) -> list[list]:
    auto = optimal_boundaries(data.token_lengths, 8)
    ours = with_buckets(data, auto)
    budget = batch_size * int(np.median(data.token_lengths))
    sampler = DistributedBucketBatchSampler(
        ours.buckets, [batch_size] * len(auto), token_lengths=data.token_lengths
    )
    budget_sampler = DistributedBucketBatchSampler(
        ours.buckets, batch_sizes_for_budget(auto, budget, MAX_TOKENS), token_lengths=data.token_lengths
    )
    shuffled = random_batches(len(data), batch_size, 0)
    schemes = {
        "pad to max": (shuffled, int(data.token_lengths.max())),
        "random batches + dynamic padding": (shuffled, None),
        "ours: 8 auto buckets + sorted windows": (list(sampler), None),
        f"ours, token budget {budget:,} per batch": (list(budget_sampler), None),
    }
    collator = BatchCollator(data, TOKENIZER, MAX_TOKENS)
    measured = {}
    for _ in range(repeats):
        for name, (batches, pad_to) in schemes.items():
            seconds, real = bare_epoch(fresh_model(), collator, batches, pad_to)
            measured[name] = min(measured.get(name, (np.inf, real)), (seconds, real))
    base = measured["pad to max"]
    return [
        [
            f"{name} ({int(data.token_lengths.max())} tokens)" if name == "pad to max" else name,
            len(schemes[name][0]),
            seconds,
            real / seconds,
            (real / seconds) / (base[1] / base[0]),
        ]
        for name, (seconds, real) in measured.items()
    ]


def trainer_epoch(data: SplitData, batch_sizes: list[int], work: Path) -> float:
    from workflow_scripts.config.types import complete_typed_sections
    from workflow_scripts.training.checkpoint import CheckpointManager
    from workflow_scripts.training.distributed import DistContext
    from workflow_scripts.training.loop import Trainer
    from workflow_scripts.training.objectives import build_objective
    from workflow_scripts.training.strategies import build_engine
    from workflow_scripts.training.telemetry import MetricsSink

    sections = complete_typed_sections({"train": TRAINER_SETTINGS}, required=("model", "train"))
    cfg = sections["train"]
    objective = build_objective("classification", cfg.objective_settings(), sections["model"])
    ctx = DistContext(rank=0, local_rank=0, world_size=1, device=torch.device("cpu"), backend=None)
    empty = SplitData(
        [], [], [], np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
    )
    model = fresh_model()
    collator = BatchCollator(data, TOKENIZER, MAX_TOKENS)
    began = time.perf_counter()
    trainer = Trainer(
        objective,
        cfg.loop_settings(),
        ctx,
        lambda total: build_engine(model, ctx, cfg, total),
        data,
        empty,
        (collator, BatchCollator(empty, TOKENIZER, MAX_TOKENS)),
        batch_sizes,
        CheckpointManager(work / "checkpoints", True),
        MetricsSink(work / "steps.jsonl", True),
    )
    trainer.bar.enabled = False
    trainer.train()
    return time.perf_counter() - began


def overhead_rows(data: SplitData, batch_size: int, repeats: int) -> list[list]:
    auto = optimal_boundaries(data.token_lengths, 8)
    ours = with_buckets(data, auto)
    sampler = DistributedBucketBatchSampler(
        ours.buckets, [batch_size] * len(auto), seed=0, token_lengths=data.token_lengths
    )
    batches = list(sampler)  # the trainer's epoch 0 with seed 0: the same batches
    collator = BatchCollator(ours, TOKENIZER, MAX_TOKENS)
    bare = trainer = np.inf
    for _ in range(repeats):
        bare = min(bare, bare_epoch(fresh_model(), collator, batches)[0])
        with tempfile.TemporaryDirectory() as tmp:
            trainer = min(trainer, trainer_epoch(ours, [batch_size] * len(auto), Path(tmp)))
    return [
        ["bare PyTorch loop", len(batches), bare, 0.0],
        ["errorseq Trainer (build + epoch + checkpoint)", len(batches), trainer, trainer / bare - 1],
    ]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=768, help="training windows (log-normal lengths)")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3, help="best of this many epochs per scheme")
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch threads (1: steadier on a shared machine; 0 = torch's default)",
    )
    args = parser.parse_args(argv)
    threads = torch.get_num_threads()
    if args.threads:
        torch.set_num_threads(args.threads)
    try:
        run_tables(args)
    finally:
        torch.set_num_threads(threads)


def run_tables(args: argparse.Namespace) -> None:
    data = synthetic_split(args.n)
    print_table(
        f"Training throughput, CPU, {args.n} log-normal windows, batch {args.batch_size}, "
        f"model {MODEL['arch']} d{MODEL['d_model']}×{MODEL['n_layers']}, {torch.get_num_threads()} threads "
        f"({load_line()})",
        ["batching", "steps", "epoch s", "real tokens / s", "× pad to max"],
        throughput_rows(data, args.batch_size, args.repeats),
    )
    print_table(
        f"Training-loop overhead, same model and batches ({load_line()})",
        ["loop", "steps", "epoch s", "slower than bare"],
        overhead_rows(data, args.batch_size, args.repeats),
    )


if __name__ == "__main__":
    main()
