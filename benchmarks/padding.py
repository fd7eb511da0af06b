"""Padding efficiency (real tokens / padded tokens) of batching schemes, batch 32.

    python -m benchmarks.padding [--n 20000] [--batch-size 32]

Distributions: the demo's window lengths, log-normal 50-2000 tokens, uniform
150-768 tokens. "same next epoch" is the share of epoch-2 batches that are
exactly an epoch-1 batch (1.0 = no randomness left in batch composition).
"ours" is errorseq's plan exactly as the trainer runs it: auto boundaries
(8 buckets), windows of 32 batches sorted by length inside each shuffled bucket,
batch order shuffled; computed by running the real sampler.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np

from benchmarks.inputs import demo_windows, lognormal_lengths, uniform_lengths
from benchmarks.tables import load_line, print_table
from workflow_scripts.bucketing.assign import assign_buckets, group_by_length_batches, random_batches
from workflow_scripts.bucketing.boundaries import batch_sizes_for_budget, optimal_boundaries
from workflow_scripts.bucketing.sampler import (
    DEFAULT_SORT_WINDOW,
    DistributedBucketBatchSampler,
    padding_efficiency,
)

SEED_000_BOUNDARIES = [256, 512, 768]


def demo_lengths() -> np.ndarray:
    """Token lengths (k=1) of both demo experiments' windows, made by the workflow."""
    import polars as pl

    with tempfile.TemporaryDirectory() as tmp:
        windows = demo_windows(Path(tmp), ("fp_vs_tp", "fn_vs_tn"))
        lengths = [
            pl.read_parquet(path, columns=["length"])["length"].to_numpy() + 1 for path in windows.values()
        ]
    return np.concatenate(lengths).astype(np.int64)


def epochs(make_batches) -> tuple[list, list]:
    return make_batches(0), make_batches(1)


def sampler_batches(lengths, boundaries, batch_sizes, sort: bool, world: int = 1):
    def make(epoch):
        buckets = assign_buckets(lengths, boundaries)
        batches = []
        for rank in range(world):
            sampler = DistributedBucketBatchSampler(
                buckets,
                batch_sizes,
                world,
                rank,
                seed=0,
                token_lengths=lengths if sort else None,
                sort_window=DEFAULT_SORT_WINDOW,
            )
            sampler.set_epoch(epoch)
            batches += list(sampler)
        return batches

    return make


def schemes(lengths: np.ndarray, batch_size: int) -> dict:
    from workflow_scripts.config.sections import section_defaults

    auto = optimal_boundaries(lengths, 8)
    budget = batch_size * int(np.median(lengths))
    bucket = section_defaults("bucket")
    fewest = optimal_boundaries(lengths, bucket["n_buckets"], bucket["target_efficiency"])
    return {
        "pad to max": lambda epoch: random_batches(len(lengths), batch_size, epoch),
        "random + dynamic padding": lambda epoch: random_batches(len(lengths), batch_size, epoch),
        "seed 000 buckets 256/512/768": sampler_batches(
            lengths, SEED_000_BOUNDARIES, [batch_size] * 3, sort=False
        ),
        "HF group_by_length (mega-batch 50)": lambda epoch: group_by_length_batches(
            lengths, batch_size, epoch
        ),
        "full sort (no randomness)": lambda epoch: np.array_split(
            np.argsort(lengths, kind="stable"), range(batch_size, len(lengths), batch_size)
        ),
        "ours: 8 auto buckets, no sorting": sampler_batches(
            lengths, auto, [batch_size] * len(auto), sort=False
        ),
        "**ours**: 8 auto buckets + sorted windows": sampler_batches(
            lengths, auto, [batch_size] * len(auto), sort=True
        ),
        "ours, 2 ranks": sampler_batches(lengths, auto, [batch_size] * len(auto), sort=True, world=2),
        f"ours, token budget {budget:,}": sampler_batches(
            lengths, auto, batch_sizes_for_budget(auto, budget, int(lengths.max())), sort=True
        ),
        f"**default**: fewest auto buckets reaching {bucket['target_efficiency']}, token budget": sampler_batches(
            lengths, fewest, batch_sizes_for_budget(fewest, budget, int(lengths.max())), sort=True
        ),
    }


def same_next_epoch(first: list, second: list) -> float:
    seen = {tuple(sorted(np.asarray(b).tolist())) for b in first}
    return sum(tuple(sorted(np.asarray(b).tolist())) in seen for b in second) / max(len(second), 1)


def measure(datasets: dict[str, np.ndarray], batch_size: int) -> dict[str, dict]:
    """scheme → data set → (efficiency, steps, same next epoch)."""
    results = {name: {} for name in schemes(next(iter(datasets.values())), batch_size)}
    for data_name, lengths in datasets.items():
        for scheme, make in schemes(lengths, batch_size).items():
            first, second = epochs(make)
            key = (
                scheme
                if not scheme.startswith("ours, token")
                else "ours, 8 buckets, token budget 32 × median"
            )
            efficiency = padding_efficiency(lengths, first)
            if scheme == "pad to max":  # every batch padded to the longest window of the data set
                efficiency = float(lengths.mean() / lengths.max())
            results.setdefault(key, {})[data_name] = (efficiency, len(first), same_next_epoch(first, second))
    return results


def table_rows(results: dict[str, dict], datasets: dict[str, np.ndarray]) -> list[list]:
    rows = []
    for scheme, by_data in results.items():
        if not by_data:
            continue
        cells = [by_data[name][0] for name in datasets]
        _, steps, same = by_data["log-normal 50-2000"]
        rows.append([scheme, *cells, steps, same])
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20_000, help="lengths per synthetic distribution")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument(
        "--no-demo", action="store_true", help="skip the demo distribution (it builds the demo data)"
    )
    args = parser.parse_args(argv)
    datasets = {"log-normal 50-2000": lognormal_lengths(args.n), "uniform 150-768": uniform_lengths(args.n)}
    if not args.no_demo:
        datasets = {"demo windows": demo_lengths(), **datasets}
    header = (
        ["scheme"]
        + [f"{name} (n={len(lengths):,})" for name, lengths in datasets.items()]
        + ["steps (log-normal)", "same next epoch (log-normal)"]
    )
    rows = table_rows(measure(datasets, args.batch_size), datasets)
    print_table(f"Padding efficiency, batch {args.batch_size} ({load_line()})", header, rows)


if __name__ == "__main__":
    main()
