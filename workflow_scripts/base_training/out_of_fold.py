"""Out-of-fold site F1 over K base_data folds (base_data.folds; docs/train_base_results.md).

Each fold folder is a Snakemake work directory whose results/base_data holds fold k as test. Every
model folder (relative names resolve inside each fold folder, e.g. results/train_base/models) is
scored on the fold's validation and test blocks as the mean of its files (a folder of several seeds'
files is their ensemble); each file's probabilities are cached in the fold folder (out_of_fold/),
then per gene-cluster unit TP/FP/FN are counted at a grid of thresholds. Reported, pooled over the folds' test
genes (each gene tested once, by the models that never trained on its cluster): site F1 at the fixed
threshold, and at the threshold each fold's validation genes picked, with gene-cluster bootstrap
intervals (units resampled across folds) of each model's difference from the first.

    python -m workflow_scripts.base_training.out_of_fold --folds runs/ft/fold0 runs/ft/fold1 \
        --models /data/start_honeybee results/train_base/models --out oof.json
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import sys
from pathlib import Path

import numpy as np
import polars as pl
import torch

from workflow_scripts.base_training.dataset import open_base_data
from workflow_scripts.base_training.evaluate import BaseModel, Scored, score_test_blocks
from workflow_scripts.base_training.site_f1 import THRESHOLDS, f1_of, unit_counts
from workflow_scripts.calling.model_files import weight_files
from workflow_scripts.calling.openspliceai import load_openspliceai
from workflow_scripts.errors import InputError, run_cli
from workflow_scripts.io_utils import atomic_path, sha256_file, write_json

GRID = np.array(THRESHOLDS)


def split_scored(fold: Path, models: list[str], split: str) -> Scored:
    """`split`'s blocks of one fold scored by every model folder (the mean of its files, as
    evaluate_base scores a folder). Each network file's probabilities are cached in the fold folder
    (out_of_fold/<digest>.npy, keyed by the file's and base_data's sha256 and the split), so a model
    scored once is never scored again: adding seeds or an ensemble of them scores only what is new."""
    base = fold / "results" / "base_data"
    data = open_base_data(base / "blocks.parquet", base / "sequence.npy", base / "labels.npy")
    half = int(json.loads((base / "manifest.json").read_text())["half_context"])
    blocks = data.blocks.filter(pl.col("split") == split).with_columns(pl.lit("test").alias("split"))
    others = data.blocks.filter(pl.col("split") != split).with_columns(pl.lit("train").alias("split"))
    chosen = dataclasses.replace(data, blocks=pl.concat([blocks, others]).sort("block"))
    folders = {name: weight_files(resolve(fold, name)) for name in models}
    cache = fold / "out_of_fold"
    data_digest = sha256_file(base / "manifest.json")
    paths = {
        path: cache / f"{cache_key(sha256_file(path), data_digest, split)}.npy"
        for files in folders.values()
        for path in map(Path, files)
    }
    missing = {cached: path for path, cached in paths.items() if not cached.exists()}  # one per content
    networks = [BaseModel(str(path), [path], [load_openspliceai(path)]) for path in missing.values()]
    scored = score_test_blocks(chosen, half, networks, torch.device("cpu"), None, sys.stderr)
    cache.mkdir(exist_ok=True)
    for cached, path in missing.items():
        with atomic_path(cached) as tmp, open(tmp, "wb") as handle:
            np.save(handle, scored.probabilities[str(path)].astype(np.float32))
    probabilities = {path: np.load(cached) for path, cached in paths.items()}
    for path, values in probabilities.items():
        if values.shape != (scored.labels.size, 3):
            raise InputError(
                paths[path], "out_of_fold cache", f"{values.shape} for {scored.labels.size} positions"
            )
    scored.probabilities = {
        name: np.mean([probabilities[Path(path)] for path in files], axis=0)
        for name, files in folders.items()
    }
    return scored


def cache_key(*digests: str) -> str:
    return hashlib.sha256("/".join(digests).encode()).hexdigest()[:24]


def split_counts(fold: Path, models: list[str], split: str, window: int, radius: int) -> np.ndarray:
    """(models, thresholds, units, 3) TP/FP/FN of `split`'s blocks of one fold."""
    scored = split_scored(fold, models, split)
    return np.stack(
        [
            np.stack(
                [
                    unit_counts(
                        scored.labels,
                        scored.probabilities[name],
                        scored.blocks,
                        scored.units,
                        scored.n_units,
                        float(threshold),
                        window,
                        radius,
                    )
                    for threshold in GRID
                ]
            )
            for name in models
        ]
    )


def resolve(fold: Path, name: str) -> Path:
    path = Path(name)
    return path if path.is_absolute() else fold / path


def fold_counts(fold: Path, models: list[str], window: int, radius: int) -> dict[str, np.ndarray]:
    return {split: split_counts(fold, models, split, window, radius) for split in ("validation", "test")}


def bootstrap(per_unit: list[np.ndarray], replicates: int, seed: int) -> dict[str, list[float]]:
    """per_unit: per model (units, 3). Percentile intervals of F1 and of each model's difference
    from the first, units resampled with replacement."""
    rng = np.random.default_rng(seed)
    n = per_unit[0].shape[0]
    scores = np.array(
        [
            [f1_of(counts[picks])["f1"] for counts in per_unit]
            for picks in (rng.integers(0, n, n) for _ in range(replicates))
        ]
    )
    out = {}
    for index in range(len(per_unit)):
        out[f"f1_{index}"] = np.percentile(scores[:, index], [2.5, 97.5]).tolist()
        out[f"diff_{index}"] = np.percentile(scores[:, index] - scores[:, 0], [2.5, 97.5]).tolist()
    return out


def report(counts: list[dict[str, np.ndarray]], names: list[str], threshold: float, replicates: int) -> dict:
    fixed = int(np.flatnonzero(np.isclose(GRID, threshold))[0])
    result: dict = {"folds": [], "threshold": threshold, "grid": GRID.tolist()}
    pooled: dict[str, list[list[np.ndarray]]] = {"fixed": [[] for _ in names], "picked": [[] for _ in names]}
    for k, fold in enumerate(counts):
        row: dict = {"fold": k, "test_units": int(fold["test"].shape[2]), "models": {}}
        for m, name in enumerate(names):
            val_f1 = [f1_of(fold["validation"][m, t])["f1"] for t in range(len(GRID))]
            picked = int(np.argmax(val_f1))
            pooled["fixed"][m].append(fold["test"][m, fixed])
            pooled["picked"][m].append(fold["test"][m, picked])
            row["models"][name] = {
                "test_fixed": f1_of(fold["test"][m, fixed]),
                "validation_threshold": float(GRID[picked]),
                "validation_f1": val_f1[picked],
                "test_picked": f1_of(fold["test"][m, picked]),
            }
        result["folds"].append(row)
    for rule, parts in pooled.items():
        per_unit = [np.concatenate(model_parts) for model_parts in parts]
        intervals = bootstrap(per_unit, replicates, seed=0)
        result[rule] = {
            name: {
                **f1_of(per_unit[m]),
                "f1_interval": intervals[f"f1_{m}"],
                "difference": f1_of(per_unit[m])["f1"] - f1_of(per_unit[0])["f1"],
                "difference_interval": intervals[f"diff_{m}"],
            }
            for m, name in enumerate(names)
        }
    result["units"] = int(sum(fold["test"].shape[2] for fold in counts))
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folds", nargs="+", required=True, type=Path)
    parser.add_argument("--models", nargs="+", required=True, help="model folders, the first the reference")
    parser.add_argument("--names", nargs="+", help="a label per model folder")
    parser.add_argument("--threshold", type=float, default=0.5)
    parser.add_argument("--window", type=int, default=2)
    parser.add_argument("--peak-radius", type=int, default=2)
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    names = args.names or args.models
    counts = [fold_counts(fold, args.models, args.window, args.peak_radius) for fold in args.folds]
    result = report(counts, names, args.threshold, args.replicates)
    write_json(args.out, result)
    for rule in ("fixed", "picked"):
        for name, values in result[rule].items():
            low, high = values["difference_interval"]
            print(
                f"{rule:6s} {name}: site F1 {values['f1']:.3f} {values['f1_interval']} "
                f"(P {values['precision']:.3f} R {values['recall']:.3f}); "
                f"difference {values['difference']:+.3f} [{low:+.3f}, {high:+.3f}]"
            )


if __name__ == "__main__":
    run_cli(main)
