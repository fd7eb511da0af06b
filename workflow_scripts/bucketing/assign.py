"""Assign each window to a token-length bucket and report padding (the bucket rule's library).

Boundaries are inclusive upper edges of token length (CLS included); a window goes
to the first bucket whose boundary is >= its token length, and windows longer than
the last boundary go to the last bucket. Windows longer than max_length tokens are
truncated at training time; they are counted and reported, never silently.

`boundaries: auto` chooses at most `n_buckets` boundaries that minimise padding of the train
split (workflow_scripts.bucketing.boundaries; with `target_efficiency`, the fewest buckets that
reach it). Batch sizes are either given per bucket (`batch_sizes`) or follow from a token budget
(`max_tokens_per_batch`: as many windows of the bucket's longest length as fit). The settings
come from the `bucket:` config section, checked once (config.validate.check_bucket). The
reported padding efficiency is measured on a simulated epoch of the real training sampler.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from workflow_scripts.artifacts import BUCKET_ROW_FIELDS, BUCKET_SUMMARY_FIELDS, PADDING_EFFICIENCY_FIELDS
from workflow_scripts.bucketing.boundaries import batch_sizes_for_budget, edge_efficiency, optimal_boundaries
from workflow_scripts.bucketing.sampler import (
    DEFAULT_SORT_WINDOW,
    DistributedBucketBatchSampler,
    padding_efficiency,
)
from workflow_scripts.data.tables import read_table
from workflow_scripts.errors import InputError
from workflow_scripts.tokenization.tokenizers import NucleotideTokenizer, window_token_lengths

if TYPE_CHECKING:
    from workflow_scripts.config.types import BucketSection
    from workflow_scripts.models.hf import HFTokenizer

SPLITS = ("train", "val", "test")
MEGA_BATCH_FACTOR = 50  # HF Trainer's group_by_length: sort 50 batches at a time
SIMULATION_SEED = 0  # of the simulated epoch that measures padding efficiency
REQUIRED_COLUMNS = ("id", "split", "label", "length")
MANIFEST_SCHEMA = pl.Schema(
    {
        "id": pl.String,
        "split": pl.String,
        "label": pl.Int8,
        "length": pl.Int32,
        "token_length": pl.Int32,
        "bucket": pl.Int16,
    }
)


@dataclass(frozen=True)
class BucketSettings:
    """The checked `bucket:` config section and the tokenizer that counts tokens."""

    tokenizer: NucleotideTokenizer | HFTokenizer
    max_length: int
    boundaries: list[int] | None  # None = auto
    n_buckets: int
    target_efficiency: float | None
    batch_sizes: list[int] | None
    max_tokens_per_batch: int | None
    max_batch_windows: int | None

    @classmethod
    def from_config(cls, bucket: BucketSection, tokenizer) -> BucketSettings:
        boundaries = bucket.boundaries
        return cls(
            tokenizer=tokenizer,
            max_length=bucket.max_length,
            boundaries=None if isinstance(boundaries, str) else list(boundaries),  # str: auto
            n_buckets=bucket.n_buckets,
            target_efficiency=bucket.target_efficiency,
            batch_sizes=bucket.batch_sizes,
            max_tokens_per_batch=bucket.max_tokens_per_batch,
            max_batch_windows=bucket.max_batch_windows,
        )


def plan_buckets(settings: BucketSettings, train_tokens: np.ndarray) -> tuple[list[int], list[int]]:
    """Boundaries (given or chosen on the train split's token lengths) and batch sizes."""
    boundaries = settings.boundaries
    if boundaries is None:
        boundaries = optimal_boundaries(train_tokens, settings.n_buckets, settings.target_efficiency)
    if settings.batch_sizes is not None:
        return boundaries, settings.batch_sizes
    assert settings.max_tokens_per_batch is not None  # check_bucket: exactly one of the two is set
    sizes = batch_sizes_for_budget(
        boundaries, settings.max_tokens_per_batch, settings.max_length, settings.max_batch_windows
    )
    return boundaries, sizes


def read_windows(path: str) -> pl.DataFrame:
    """The columns the manifest needs, with types checked; InputError names the file."""
    windows = read_table(path, columns=REQUIRED_COLUMNS)
    for name in REQUIRED_COLUMNS:
        if windows[name].null_count():
            raise InputError(path, name, f"{windows[name].null_count()} missing value(s)")
    return windows.select(
        _cast_column(windows, path, name, MANIFEST_SCHEMA[name]) for name in REQUIRED_COLUMNS
    )


def _cast_column(windows: pl.DataFrame, path: str, name: str, dtype: pl.DataType) -> pl.Series:
    try:
        return windows[name].cast(dtype, strict=True)
    except pl.exceptions.PolarsError:
        raise InputError(path, name, f"cannot read as {dtype} (found {windows[name].dtype})") from None


def read_sequences(path: str) -> list[str]:
    """The windows' sequences, in file order (a BPE tokenizer counts tokens from them)."""
    return read_table(path, columns=["sequence"])["sequence"].to_list()


def check_windows(windows: pl.DataFrame, path: str) -> None:
    unknown = sorted(set(windows["split"].unique().to_list()) - set(SPLITS))
    if unknown:
        raise InputError(path, "split", f"unknown value(s) {unknown}; expected one of {list(SPLITS)}")
    if (windows["length"] < 0).any():
        raise InputError(path, "length", "negative nucleotide length")
    if not (windows["split"] == "train").any():
        raise InputError(path, "split", "no windows with split 'train'; cannot plan training batches")


def assign_buckets(token_lengths: np.ndarray, boundaries: list[int]) -> np.ndarray:
    """Index of the first boundary >= each token length; overlong windows go to the last bucket."""
    buckets = np.searchsorted(np.asarray(boundaries), token_lengths, side="left")
    return np.minimum(buckets, len(boundaries) - 1)


def build_manifest(windows: pl.DataFrame, token_lengths: np.ndarray, boundaries: list[int]) -> pl.DataFrame:
    manifest = windows.with_columns(
        pl.Series("token_length", token_lengths),
        pl.Series("bucket", assign_buckets(token_lengths, boundaries)),
    )
    return manifest.select(pl.col(name).cast(dtype) for name, dtype in MANIFEST_SCHEMA.items())


def bucket_rows(
    manifest: pl.DataFrame, boundaries: list[int], batch_sizes: list[int], max_length: int
) -> list[dict]:
    rows = []
    for bucket, (upper, batch_size) in enumerate(zip(boundaries, batch_sizes)):
        members = manifest.filter(pl.col("bucket") == bucket)
        count_by_split = {split: int((members["split"] == split).sum()) for split in SPLITS}
        row = {
            "bucket": bucket,
            "lower": boundaries[bucket - 1] + 1 if bucket else 1,
            "upper": upper,
            "count": members.height,
            "batch_size": batch_size,
            "max_batch_tokens": batch_size * min(upper, max_length),
            "count_by_split": count_by_split,
        }
        rows.append(declared(row, BUCKET_ROW_FIELDS, "bucket row"))
    return rows


def efficiency_report(
    token_lengths: np.ndarray, kept_tokens: np.ndarray, buckets: np.ndarray, batch_sizes: list[int], seed: int
) -> dict[str, float]:
    """Padding efficiency (real / padded tokens) of one simulated single-replica epoch.

    `plan` runs the training sampler exactly as the trainer builds it (sorted by
    `token_lengths`); the baselines use the plan's mean batch size. `kept_tokens`
    are the token lengths after truncation to max_length, which the efficiency counts.
    """
    sampler = DistributedBucketBatchSampler(buckets, batch_sizes, seed=seed, token_lengths=token_lengths)
    batch_size = max(1, int(round(len(token_lengths) / len(sampler))))
    report = {
        "plan": round(padding_efficiency(kept_tokens, sampler), 6),
        "pad_to_max": round(padding_efficiency(kept_tokens, [np.arange(len(kept_tokens))]), 6),
        "random_dynamic": round(
            padding_efficiency(kept_tokens, random_batches(len(kept_tokens), batch_size, seed)), 6
        ),
        "group_by_length": round(
            padding_efficiency(kept_tokens, group_by_length_batches(kept_tokens, batch_size, seed)), 6
        ),
    }
    return declared(report, PADDING_EFFICIENCY_FIELDS, "padding efficiency")


def random_batches(n: int, batch_size: int, seed: int) -> list[np.ndarray]:
    """Shuffled batches, each padded to its own longest window (dynamic padding)."""
    shuffled = np.random.default_rng(seed).permutation(n)
    return np.array_split(shuffled, range(batch_size, n, batch_size))


def group_by_length_batches(token_lengths: np.ndarray, batch_size: int, seed: int) -> list[np.ndarray]:
    """HF Trainer's `group_by_length`: shuffle, sort mega-batches of 50 batches by length, cut."""
    shuffled = np.random.default_rng(seed).permutation(len(token_lengths))
    mega = batch_size * MEGA_BATCH_FACTOR
    batches = []
    for start in range(0, len(shuffled), mega):
        chunk = shuffled[start : start + mega]
        chunk = chunk[np.argsort(-token_lengths[chunk], kind="stable")]
        batches += np.array_split(chunk, range(batch_size, len(chunk), batch_size))
    return batches


def build_summary(
    manifest: pl.DataFrame, settings: BucketSettings, boundaries: list[int], batch_sizes: list[int], seed: int
) -> dict:
    train = manifest.filter(pl.col("split") == "train")
    train_tokens = train["token_length"].to_numpy()
    kept = np.minimum(train_tokens, settings.max_length)
    summary = {
        "tokenizer": settings.tokenizer.to_dict(),
        "boundaries": boundaries,
        "boundaries_mode": "given" if settings.boundaries is not None else "auto",
        "batch_sizes": batch_sizes,
        "max_tokens_per_batch": settings.max_tokens_per_batch,
        "sort_window": DEFAULT_SORT_WINDOW,
        "max_length": settings.max_length,
        "n_truncated": int((manifest["token_length"] > settings.max_length).sum()),
        "buckets": bucket_rows(manifest, boundaries, batch_sizes, settings.max_length),
        "edge_efficiency": round(edge_efficiency(kept, boundaries), 6),
        "padding_efficiency": efficiency_report(
            train_tokens, kept, train["bucket"].to_numpy(), batch_sizes, seed
        ),
    }
    return declared(summary, BUCKET_SUMMARY_FIELDS, "bucket summary")


def declared(document: dict, fields: tuple[str, ...], what: str) -> dict:
    """`document`, whose keys must be exactly the `fields` workflow_scripts.artifacts declares."""
    if tuple(document) != fields:
        raise ValueError(f"{what}: fields {list(document)} are not the declared {list(fields)}")
    return document


def format_report(summary: dict, n_over_last_boundary: int) -> str:
    lines = [
        f"boundaries ({summary['boundaries_mode']}): {summary['boundaries']}; "
        + (
            f"batch sizes from max_tokens_per_batch {summary['max_tokens_per_batch']}"
            if summary["max_tokens_per_batch"]
            else "batch sizes given"
        ),
        f"{'bucket':>6} {'tokens':>12} {'batch':>6} {'train':>8} {'val':>8} {'test':>8} {'total':>8}",
    ]
    for row in summary["buckets"]:
        last = row["bucket"] == len(summary["buckets"]) - 1
        span = f"{row['lower']}-{row['upper']}{'+' if last else ''}"
        counts = [row["count_by_split"][split] for split in SPLITS] + [row["count"]]
        lines.append(
            f"{row['bucket']:>6} {span:>12} {row['batch_size']:>6} " + " ".join(f"{n:>8}" for n in counts)
        )
    efficiency = summary["padding_efficiency"]
    lines.append(
        "padding efficiency (train, 1 replica): "
        + ", ".join(f"{name} {value:.3f}" for name, value in efficiency.items())
    )
    if n_over_last_boundary:
        lines.append(
            f"note: {n_over_last_boundary} window(s) exceed the last boundary; they join the last bucket"
        )
    prefix = "warning: " if summary["n_truncated"] else ""
    lines.append(
        f"{prefix}{summary['n_truncated']} window(s) exceed max_length {summary['max_length']} tokens "
        "and will be truncated at training time"
    )
    return "\n".join(lines)


def bucket_windows(windows_path: str, settings: BucketSettings) -> tuple[pl.DataFrame, dict, str]:
    """(manifest, summary, report) for the windows table at `windows_path`."""
    windows = read_windows(windows_path)
    check_windows(windows, windows_path)
    token_lengths = window_token_lengths(
        settings.tokenizer, lambda: read_sequences(windows_path), windows["length"].to_numpy()
    )
    train_tokens = np.minimum(token_lengths[(windows["split"] == "train").to_numpy()], settings.max_length)
    boundaries, batch_sizes = plan_buckets(settings, train_tokens)
    manifest = build_manifest(windows, token_lengths, boundaries)
    summary = build_summary(manifest, settings, boundaries, batch_sizes, SIMULATION_SEED)
    n_over_last_boundary = int((manifest["token_length"] > boundaries[-1]).sum())
    return manifest, summary, format_report(summary, n_over_last_boundary)
