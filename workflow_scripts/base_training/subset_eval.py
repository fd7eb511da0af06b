"""Base models on a share of base_data's test blocks, one network at a time, scores cached: the
learning curves of docs/train_base_results.md ("Learning curve on A. arenosa chr2 9-12 Mb").

evaluate_base scores every model of a run on every test block; on a shared CPU one 10k network over
A. arenosa chr2 9-12 Mb's 562 genes (6.3 M input nt) is ~500 CPU-s. Here each network is scored once
on the test blocks whose gene cluster `cluster % every == 0` (a fixed share of whole clusters) and
its probabilities are cached (`score`); a folder's ensemble is the mean of its networks' cached
probabilities, and a region already scanned by score_base_model is read at the blocks' positions
instead of scored again (`scan`). `report` gives evaluate_base's site F1 (window 2, peak radius 2) and
AUPRC per model with gene-cluster bootstrap intervals of every pairwise difference; a model named
`name@T` is called at threshold T (e.g. the one its validation genes picked), the others at
`--threshold`.

    python -m workflow_scripts.base_training.subset_eval score --base-data B --weights model.pt --every 3 --out m.npz
    python -m workflow_scripts.base_training.subset_eval scan --base-data B --shards S --every 1 --out ens.npz
    python -m workflow_scripts.base_training.subset_eval report --base-data B --every 6 --out r.json \\
        start=m.npz:3 ensemble=a.npz:6+b.npz:6 tuned@0.4=m.npz:3
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl
import torch

from workflow_scripts.base_training.dataset import BaseData, open_base_data
from workflow_scripts.base_training.evaluate import BaseModel, Scored, SiteCalls, score_test_blocks
from workflow_scripts.base_training.metrics import average_precision
from workflow_scripts.base_training.site_f1 import f1_of
from workflow_scripts.calling.openspliceai import load_openspliceai
from workflow_scripts.errors import InputError, run_cli
from workflow_scripts.io_utils import write_json


def open_folder(folder: Path) -> tuple[BaseData, int]:
    half = int(json.loads((folder / "manifest.json").read_text())["half_context"])
    return open_base_data(folder / "blocks.parquet", folder / "sequence.npy", folder / "labels.npy"), half


def chosen_blocks(data: BaseData, every: int) -> pl.DataFrame:
    test = pl.col("split") == "test"
    return data.blocks.filter(test & (pl.col("cluster") % every == 0)).sort("block")


def positions(
    data: BaseData, half: int, every: int
) -> tuple[pl.DataFrame, np.ndarray, np.ndarray, np.ndarray]:
    """The chosen blocks and, per labelled core position in score_test_blocks' order, its label,
    gene cluster and block."""
    blocks = chosen_blocks(data, every)
    labels, clusters, numbers = [], [], []
    for row in blocks.iter_rows(named=True):
        _, label = data.block(row["block"])
        core = np.asarray(label[half : len(label) - half])
        keep = core >= 0
        labels.append(core[keep])
        clusters.append(np.full(int(keep.sum()), row["cluster"]))
        numbers.append(np.full(int(keep.sum()), row["block"]))
    return blocks, np.concatenate(labels), np.concatenate(clusters), np.concatenate(numbers)


def score(args: argparse.Namespace) -> None:
    data, half = open_folder(args.base_data)
    split = pl.when((pl.col("split") == "test") & (pl.col("cluster") % args.every == 0))
    only = data.blocks.with_columns(split.then(pl.lit("test")).otherwise(pl.lit("train")).alias("split"))
    torch.set_num_threads(args.threads)
    model = BaseModel(args.weights.stem, [args.weights], [load_openspliceai(args.weights)])
    began, cpu = time.perf_counter(), time.process_time()
    scored = score_test_blocks(
        dataclasses.replace(data, blocks=only), half, [model], torch.device("cpu"), None, sys.stderr
    )
    wall, cpu = time.perf_counter() - began, time.process_time() - cpu
    partial = args.out.with_name(args.out.name + ".partial.npz")
    np.savez(partial, probabilities=scored.probabilities[model.name].astype(np.float32))
    partial.rename(args.out)
    print(f"{args.weights.name}: {scored.labels.size:,} labelled nt, {wall:.0f} s wall, {cpu:.0f} CPU-s")


def scan(args: argparse.Namespace) -> None:
    """[neither, acceptor, donor] from score_base_model's shards (1-based positions per strand) at
    the chosen blocks' core positions (0-based half-open cores, read 5'->3' on their strand)."""
    data, _ = open_folder(args.base_data)
    wanted = []
    for row in chosen_blocks(data, args.every).iter_rows(named=True):
        n = row["core_end"] - row["core_start"]
        step = np.arange(n)
        where = row["core_start"] + 1 + step if row["strand"] == "+" else row["core_end"] - step
        wanted.append(
            pl.DataFrame({"chrom": [row["chrom"]] * n, "strand": [row["strand"]] * n, "position": where})
        )
    columns = ["chrom", "strand", "position", "donor", "acceptor"]
    shards = pl.concat([pl.read_parquet(p, columns=columns) for p in sorted(args.shards.glob("*.parquet"))])
    table = pl.concat(wanted).with_row_index("i").join(shards, on=columns[:3], how="left").sort("i")
    if table["donor"].null_count():
        raise InputError(
            args.shards, "position", f"{table['donor'].null_count():,} block positions not scanned"
        )
    donor, acceptor = table["donor"].to_numpy(), table["acceptor"].to_numpy()
    np.savez(
        args.out, probabilities=np.stack([1 - donor - acceptor, acceptor, donor], axis=1).astype(np.float32)
    )
    print(f"{len(table):,} positions read from the scan")


def model_threshold(name: str, default: float) -> float:
    """T of a model named `name@T`, else `default`."""
    if "@" not in name:
        return default
    text = name.rsplit("@", 1)[1]
    try:
        threshold = float(text)
    except ValueError:
        threshold = -1.0
    if not 0 < threshold < 1:
        raise InputError("report", name, f"threshold {text!r} is not a number between 0 and 1")
    return threshold


def report(args: argparse.Namespace) -> None:
    data, half = open_folder(args.base_data)
    blocks, labels, clusters, numbers = positions(data, half, args.every)
    masks: dict[int, np.ndarray] = {}

    def cached(spec: str) -> np.ndarray:  # file.npz:m, scored on the blocks of cluster % m == 0
        path, every = spec.rsplit(":", 1)
        if int(every) not in masks:
            masks[int(every)] = positions(data, half, int(every))[2] % args.every == 0
        values = np.load(path)["probabilities"]
        if len(values) != len(masks[int(every)]):
            raise InputError(path, "probabilities", f"{len(values):,} rows, not the blocks of every {every}")
        return values[masks[int(every)]]

    probabilities, thresholds = {}, {}
    for item in args.models:
        name, files = item.split("=", 1)
        probabilities[name] = np.mean([cached(spec) for spec in files.split("+")], axis=0)
        thresholds[name] = model_threshold(name, args.threshold)
    _, units = np.unique(clusters, return_inverse=True)
    scored = Scored(labels.astype(np.int64), units.astype(np.int64), numbers, probabilities)
    counts = {name: SiteCalls(thresholds[name], 2, 2).counts(scored, name) for name in probabilities}
    rng = np.random.default_rng(args.seed)
    draws = [rng.integers(0, scored.n_units, scored.n_units) for _ in range(args.replicates)]
    result: dict = {
        "genes": int(blocks["genes"].list.len().sum()),
        "units": scored.n_units,
        "sites": int((labels > 0).sum()),
        "threshold": args.threshold,
        "replicates": args.replicates,
        "models": {},
        "differences": {},
    }
    for name, count in counts.items():
        boot = np.quantile([f1_of(count[c])["f1"] for c in draws], [0.025, 0.975])
        result["models"][name] = {
            **f1_of(count),
            "threshold": thresholds[name],
            "f1_interval": boot.tolist(),
            "acceptor_auprc": average_precision(labels == 1, probabilities[name][:, 1]),
            "donor_auprc": average_precision(labels == 2, probabilities[name][:, 2]),
        }
        m = result["models"][name]
        print(
            f"{name}: site F1 {m['f1']:.3f} [{boot[0]:.3f}, {boot[1]:.3f}] P {m['precision']:.3f} "
            f"R {m['recall']:.3f}, AUPRC acceptor {m['acceptor_auprc']:.3f} donor {m['donor_auprc']:.3f}"
        )
    names = list(counts)
    for i, first in enumerate(names):
        for other in names[i + 1 :]:
            gaps = [f1_of(counts[other][c])["f1"] - f1_of(counts[first][c])["f1"] for c in draws]
            low, high = np.quantile(gaps, [0.025, 0.975]).tolist()
            point = result["models"][other]["f1"] - result["models"][first]["f1"]
            result["differences"][f"{other} - {first}"] = {"difference": point, "low": low, "high": high}
            print(f"{other} - {first}: {point:+.3f} [{low:+.3f}, {high:+.3f}]")
    print(f"{result['genes']} genes, {result['units']} gene-cluster units, {result['sites']} sites")
    write_json(args.out, result)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m workflow_scripts.base_training.subset_eval", description=__doc__
    )
    commands = parser.add_subparsers(dest="command", required=True)
    for name in ("score", "scan", "report"):
        command = commands.add_parser(name)
        command.add_argument("--base-data", type=Path, required=True, help="a base_data folder")
        command.add_argument("--every", type=int, default=1, help="the test blocks of cluster %% every == 0")
        command.add_argument("--out", type=Path, required=True)
    commands.choices["score"].add_argument("--weights", type=Path, required=True, help="one OpenSpliceAI .pt")
    commands.choices["score"].add_argument("--threads", type=int, default=2)
    commands.choices["scan"].add_argument(
        "--shards", type=Path, required=True, help="score_base_model's shards/"
    )
    commands.choices["report"].add_argument(
        "models", nargs="+", help="name=file.npz:every[+file.npz:every...]"
    )
    commands.choices["report"].add_argument("--threshold", type=float, default=0.5)
    commands.choices["report"].add_argument("--replicates", type=int, default=2000)
    commands.choices["report"].add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    {"score": score, "scan": scan, "report": report}[args.command](args)


if __name__ == "__main__":
    run_cli(main)
