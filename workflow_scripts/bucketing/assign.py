"""The `bucket` rule: assign each window to a token-length bucket and report padding.

Boundaries are inclusive upper edges of token length (CLS included); a window goes
to the first bucket whose boundary is >= its token length, and windows longer than
the last boundary go to the last bucket. Windows longer than max_length tokens are
truncated at training time; they are counted and reported, never silently.

`--boundaries auto` chooses at most `--n-buckets` boundaries that minimise padding
of the train split (workflow_scripts.bucketing.boundaries; with `--target-efficiency`, the
fewest buckets that reach it). Batch sizes are either given per bucket
(`--batch-sizes`) or follow from a token budget (`--max-tokens-per-batch`: as many
windows of the bucket's longest length as fit). The reported padding efficiency
is measured on a simulated epoch of the real training sampler.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

import numpy as np
import polars as pl

from workflow_scripts.bucketing.boundaries import batch_sizes_for_budget, edge_efficiency, optimal_boundaries
from workflow_scripts.errors import InputError, run_cli
from workflow_scripts.io_utils import write_json, write_parquet
from workflow_scripts.bucketing.sampler import DEFAULT_SORT_WINDOW, DistributedBucketBatchSampler, padding_efficiency
from workflow_scripts.tokenization.tokenizers import NucleotideTokenizer, load_tokenizer, window_token_lengths

SPLITS = ("train", "val", "test")
MEGA_BATCH_FACTOR = 50  # HF Trainer's group_by_length: sort 50 batches at a time
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
    parser.add_argument("--tokenizer-dir", help="a Hugging Face tokenizer directory (BPE); replaces --k")
    parser.add_argument("--trust-remote-code", action="store_true", help="with --tokenizer-dir")
    parser.add_argument("--boundaries", required=True, help="'auto' or inclusive upper token lengths, e.g. 200,300,402")
    parser.add_argument("--n-buckets", default="8", help="with --boundaries auto: most buckets to use")
    parser.add_argument("--target-efficiency", help="with --boundaries auto: fewest buckets reaching this")
    budget = parser.add_mutually_exclusive_group(required=True)
    budget.add_argument("--batch-sizes", help="batch size per bucket, e.g. 64,48,32")
    budget.add_argument("--max-tokens-per-batch", help="token budget per batch (per rank); sets batch sizes")
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


@dataclass
class BucketSettings:
    """The `bucket:` config as the rule passes it (boundaries None = auto)."""

    tokenizer: NucleotideTokenizer
    max_length: int
    boundaries: list[int] | None
    n_buckets: int
    target_efficiency: float | None
    batch_sizes: list[int] | None
    max_tokens_per_batch: int | None


def parse_config(args: argparse.Namespace) -> BucketSettings:
    tokenizer = NucleotideTokenizer(parse_int(args.k, "tokenizer.k", 1))
    if args.tokenizer_dir:
        tokenizer = load_tokenizer({"kind": "hf", "path": args.tokenizer_dir,
                                    "trust_remote_code": args.trust_remote_code})
    boundaries = None
    if str(args.boundaries).strip() != "auto":
        boundaries = parse_int_list(args.boundaries, "bucket.boundaries", 1)
        if any(lower >= upper for lower, upper in zip(boundaries, boundaries[1:])):
            raise InputError("config", "bucket.boundaries", f"must be strictly increasing, got {boundaries}")
    batch_sizes = budget = None
    if args.batch_sizes is not None:
        batch_sizes = parse_int_list(args.batch_sizes, "bucket.batch_sizes", 1)
        if boundaries is None:
            raise InputError("config", "bucket.batch_sizes", "needs explicit boundaries; with boundaries auto use max_tokens_per_batch")
        if len(batch_sizes) != len(boundaries):
            raise InputError(
                "config",
                "bucket.batch_sizes",
                f"needs one batch size per boundary ({len(boundaries)}), got {len(batch_sizes)}",
            )
    else:
        budget = parse_int(args.max_tokens_per_batch, "bucket.max_tokens_per_batch", 1)
    return BucketSettings(
        tokenizer=tokenizer,
        max_length=parse_int(args.max_length, "bucket.max_length", 2),
        boundaries=boundaries,
        n_buckets=parse_int(args.n_buckets, "bucket.n_buckets", 1),
        target_efficiency=parse_fraction(args.target_efficiency, "bucket.target_efficiency"),
        batch_sizes=batch_sizes,
        max_tokens_per_batch=budget,
    )


def parse_fraction(text: str | None, field: str) -> float | None:
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        raise InputError("config", field, f"expected a number, got {text!r}") from None
    if not 0 < value <= 1:
        raise InputError("config", field, f"must be in (0, 1], got {value}")
    return value


def plan_buckets(settings: BucketSettings, train_tokens: np.ndarray) -> tuple[list[int], list[int]]:
    """Boundaries (given or chosen on the train split's token lengths) and batch sizes."""
    boundaries = settings.boundaries
    if boundaries is None:
        boundaries = optimal_boundaries(train_tokens, settings.n_buckets, settings.target_efficiency)
    if settings.batch_sizes is not None:
        return boundaries, settings.batch_sizes
    return boundaries, batch_sizes_for_budget(boundaries, settings.max_tokens_per_batch, settings.max_length)


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


def read_sequences(path: str) -> list[str]:
    """The windows' sequences, in file order (a BPE tokenizer counts tokens from them)."""
    return pl.read_parquet(path, columns=["sequence"])["sequence"].to_list()


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


def bucket_rows(manifest: pl.DataFrame, boundaries: list[int], batch_sizes: list[int], max_length: int) -> list[dict]:
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
                "max_batch_tokens": batch_size * min(upper, max_length),
                "count_by_split": count_by_split,
            }
        )
    return rows


def efficiency_report(token_lengths: np.ndarray, kept_tokens: np.ndarray, buckets: np.ndarray,
                      batch_sizes: list[int], seed: int) -> dict[str, float]:
    """Padding efficiency (real / padded tokens) of one simulated single-replica epoch.

    `plan` runs the training sampler exactly as the trainer builds it (sorted by
    `token_lengths`); the baselines use the plan's mean batch size. `kept_tokens`
    are the token lengths after truncation to max_length, which the efficiency counts.
    """
    sampler = DistributedBucketBatchSampler(buckets, batch_sizes, seed=seed, token_lengths=token_lengths)
    batch_size = max(1, int(round(len(token_lengths) / len(sampler))))
    return {
        "plan": round(padding_efficiency(kept_tokens, sampler), 6),
        "pad_to_max": round(padding_efficiency(kept_tokens, [np.arange(len(kept_tokens))]), 6),
        "random_dynamic": round(padding_efficiency(kept_tokens, random_batches(len(kept_tokens), batch_size, seed)), 6),
        "group_by_length": round(padding_efficiency(kept_tokens, group_by_length_batches(kept_tokens, batch_size, seed)), 6),
    }


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


def build_summary(manifest: pl.DataFrame, settings: BucketSettings, boundaries: list[int],
                  batch_sizes: list[int], seed: int) -> dict:
    train = manifest.filter(pl.col("split") == "train")
    train_tokens = train["token_length"].to_numpy()
    kept = np.minimum(train_tokens, settings.max_length)
    return {
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
        "padding_efficiency": efficiency_report(train_tokens, kept, train["bucket"].to_numpy(), batch_sizes, seed),
    }


def format_report(summary: dict, n_over_last_boundary: int) -> str:
    lines = [
        f"boundaries ({summary['boundaries_mode']}): {summary['boundaries']}; "
        + (f"batch sizes from max_tokens_per_batch {summary['max_tokens_per_batch']}"
           if summary["max_tokens_per_batch"] else "batch sizes given"),
        f"{'bucket':>6} {'tokens':>12} {'batch':>6} {'train':>8} {'val':>8} {'test':>8} {'total':>8}",
    ]
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
    settings = parse_config(args)
    seed = parse_int(args.seed, "bucket.seed", 0)
    windows = read_windows(args.windows)
    check_windows(windows, args.windows)
    token_lengths = window_token_lengths(settings.tokenizer, lambda: read_sequences(args.windows),
                                         windows["length"].to_numpy())
    train_tokens = np.minimum(token_lengths[(windows["split"] == "train").to_numpy()], settings.max_length)
    boundaries, batch_sizes = plan_buckets(settings, train_tokens)
    manifest = build_manifest(windows, token_lengths, boundaries)
    summary = build_summary(manifest, settings, boundaries, batch_sizes, seed)
    n_over_last_boundary = int((manifest["token_length"] > boundaries[-1]).sum())
    print(format_report(summary, n_over_last_boundary), file=sys.stderr)
    write_parquet(manifest, args.out_manifest)
    write_json(args.out_summary, summary)


if __name__ == "__main__":
    run_cli(main)
