"""The `bucket` rule: assign each window to a token-length bucket and report padding.

Boundaries are inclusive upper edges of token length (CLS included); a window goes
to the first bucket whose boundary is >= its token length, and windows longer than
the last boundary go to the last bucket. Windows longer than max_length tokens are
truncated at training time; they are counted and reported, never silently.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import polars as pl

from workflow_scripts.errors import InputError, run_cli
from workflow_scripts.io_utils import write_json, write_parquet
from workflow_scripts.sampler import DistributedBucketBatchSampler, padding_efficiency
from workflow_scripts.tokenizer import NucleotideTokenizer

SPLITS = ("train", "val", "test")
REQUIRED_COLUMNS = ("id", "split", "label", "length")
MANIFEST_SCHEMA = {
    "id": pl.String,
    "split": pl.String,
    "label": pl.Int8,
    "length": pl.Int32,
    "token_length": pl.Int32,
    "bucket": pl.Int16,
}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--windows", required=True, help="windows parquet (id, split, label, length, ...)")
    parser.add_argument("--k", default="1", help="k-mer size of the nucleotide tokenizer")
    parser.add_argument("--boundaries", required=True, help="inclusive upper token lengths, e.g. 200,300,402")
    parser.add_argument("--batch-sizes", required=True, help="batch size per bucket, e.g. 64,48,32")
    parser.add_argument("--max-length", required=True, help="tokens kept per window at training time")
    parser.add_argument("--seed", default="0", help="seed of the simulated epoch for padding efficiency")
    parser.add_argument("--out-manifest", required=True)
    parser.add_argument("--out-summary", required=True)
    return parser.parse_args(argv)


def parse_int(text: str, field: str, minimum: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise InputError("config", field, f"expected an integer, got {text!r}") from None
    if value < minimum:
        raise InputError("config", field, f"must be >= {minimum}, got {value}")
    return value


def parse_int_list(text: str, field: str, minimum: int) -> list[int]:
    parts = [part.strip() for part in str(text).split(",")]
    if not all(parts):
        raise InputError("config", field, f"expected comma-separated integers, got {text!r}")
    return [parse_int(part, field, minimum) for part in parts]


def parse_config(args: argparse.Namespace) -> tuple[NucleotideTokenizer, list[int], list[int], int]:
    tokenizer = NucleotideTokenizer(parse_int(args.k, "tokenizer.k", 1))
    boundaries = parse_int_list(args.boundaries, "bucket.boundaries", 1)
    if any(lower >= upper for lower, upper in zip(boundaries, boundaries[1:])):
        raise InputError("config", "bucket.boundaries", f"must be strictly increasing, got {boundaries}")
    batch_sizes = parse_int_list(args.batch_sizes, "bucket.batch_sizes", 1)
    if len(batch_sizes) != len(boundaries):
        raise InputError(
            "config",
            "bucket.batch_sizes",
            f"needs one batch size per boundary ({len(boundaries)}), got {len(batch_sizes)}",
        )
    max_length = parse_int(args.max_length, "bucket.max_length", 2)
    return tokenizer, boundaries, batch_sizes, max_length


def read_windows(path: str) -> pl.DataFrame:
    """The columns the manifest needs, with types checked; InputError names the file."""
    try:
        columns = pl.scan_parquet(path).collect_schema().names()
    except (OSError, pl.exceptions.PolarsError) as error:
        raise InputError(path, "file", f"cannot read parquet: {error}") from None
    missing = [name for name in REQUIRED_COLUMNS if name not in columns]
    if missing:
        raise InputError(path, "columns", f"missing required column(s): {', '.join(missing)}")
    windows = pl.read_parquet(path, columns=list(REQUIRED_COLUMNS))
    for name in REQUIRED_COLUMNS:
        if windows[name].null_count():
            raise InputError(path, name, f"{windows[name].null_count()} missing value(s)")
    return windows.select(
        _cast_column(windows, path, "id", pl.String),
        _cast_column(windows, path, "split", pl.String),
        _cast_column(windows, path, "label", pl.Int8),
        _cast_column(windows, path, "length", pl.Int32),
    )


def _cast_column(windows: pl.DataFrame, path: str, name: str, dtype: pl.DataType) -> pl.Series:
    try:
        return windows[name].cast(dtype, strict=True)
    except pl.exceptions.PolarsError:
        raise InputError(path, name, f"cannot read as {dtype} (found {windows[name].dtype})") from None


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


def build_manifest(windows: pl.DataFrame, tokenizer: NucleotideTokenizer, boundaries: list[int]) -> pl.DataFrame:
    token_lengths = tokenizer.token_lengths(windows["length"].to_numpy())
    manifest = windows.with_columns(
        pl.Series("token_length", token_lengths),
        pl.Series("bucket", assign_buckets(token_lengths, boundaries)),
    )
    return manifest.select(pl.col(name).cast(dtype) for name, dtype in MANIFEST_SCHEMA.items())


def bucket_rows(manifest: pl.DataFrame, boundaries: list[int], batch_sizes: list[int]) -> list[dict]:
    rows = []
    for bucket, (upper, batch_size) in enumerate(zip(boundaries, batch_sizes)):
        members = manifest.filter(pl.col("bucket") == bucket)
        count_by_split = {split: int((members["split"] == split).sum()) for split in SPLITS}
        rows.append(
            {
                "bucket": bucket,
                "lower": boundaries[bucket - 1] + 1 if bucket else 1,
                "upper": upper,
                "count": members.height,
                "batch_size": batch_size,
                "count_by_split": count_by_split,
            }
        )
    return rows


def efficiency_report(
    token_lengths: np.ndarray, buckets: np.ndarray, batch_sizes: list[int], seed: int
) -> dict[str, float]:
    """Padding efficiency of one simulated single-replica epoch, three ways."""
    sampler = DistributedBucketBatchSampler(buckets, batch_sizes, num_replicas=1, rank=0, seed=seed)
    median_batch_size = max(1, int(round(float(np.median(batch_sizes)))))
    shuffled = np.random.default_rng(seed).permutation(len(token_lengths))
    random_batches = np.array_split(shuffled, range(median_batch_size, len(shuffled), median_batch_size))
    return {
        "plan": round(padding_efficiency(token_lengths, sampler), 6),
        "pad_to_max": round(padding_efficiency(token_lengths, [np.arange(len(token_lengths))]), 6),
        "random_dynamic": round(padding_efficiency(token_lengths, random_batches), 6),
    }


def build_summary(
    manifest: pl.DataFrame,
    tokenizer: NucleotideTokenizer,
    boundaries: list[int],
    batch_sizes: list[int],
    max_length: int,
    seed: int,
) -> dict:
    train = manifest.filter(pl.col("split") == "train")
    train_tokens = np.minimum(train["token_length"].to_numpy(), max_length)
    return {
        "tokenizer": tokenizer.to_dict(),
        "boundaries": boundaries,
        "batch_sizes": batch_sizes,
        "max_length": max_length,
        "n_truncated": int((manifest["token_length"] > max_length).sum()),
        "buckets": bucket_rows(manifest, boundaries, batch_sizes),
        "padding_efficiency": efficiency_report(train_tokens, train["bucket"].to_numpy(), batch_sizes, seed),
    }


def format_report(summary: dict, n_over_last_boundary: int) -> str:
    lines = [f"{'bucket':>6} {'tokens':>12} {'batch':>6} {'train':>8} {'val':>8} {'test':>8} {'total':>8}"]
    for row in summary["buckets"]:
        last = row["bucket"] == len(summary["buckets"]) - 1
        span = f"{row['lower']}-{row['upper']}{'+' if last else ''}"
        counts = [row["count_by_split"][split] for split in SPLITS] + [row["count"]]
        lines.append(f"{row['bucket']:>6} {span:>12} {row['batch_size']:>6} " + " ".join(f"{n:>8}" for n in counts))
    efficiency = summary["padding_efficiency"]
    lines.append(
        "padding efficiency (train, 1 replica): "
        + ", ".join(f"{name} {value:.3f}" for name, value in efficiency.items())
    )
    if n_over_last_boundary:
        lines.append(f"note: {n_over_last_boundary} window(s) exceed the last boundary; they join the last bucket")
    prefix = "warning: " if summary["n_truncated"] else ""
    lines.append(
        f"{prefix}{summary['n_truncated']} window(s) exceed max_length {summary['max_length']} tokens "
        "and will be truncated at training time"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    tokenizer, boundaries, batch_sizes, max_length = parse_config(args)
    seed = parse_int(args.seed, "bucket.seed", 0)
    windows = read_windows(args.windows)
    check_windows(windows, args.windows)
    manifest = build_manifest(windows, tokenizer, boundaries)
    summary = build_summary(manifest, tokenizer, boundaries, batch_sizes, max_length, seed)
    n_over_last_boundary = int((manifest["token_length"] > boundaries[-1]).sum())
    print(format_report(summary, n_over_last_boundary), file=sys.stderr)
    write_parquet(manifest, args.out_manifest)
    write_json(args.out_summary, summary)


if __name__ == "__main__":
    run_cli(main)
