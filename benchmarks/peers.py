"""errorseq against the tools users would pick instead: the same BERT fine-tuned on the same windows.

    python -m benchmarks.peers [--quick] [--work-dir DIR]
    python -m benchmarks.peers --device cuda --ranks 1 --model base --tokens-per-rank 12800 --lr 1e-4  # GPU

Three peers train the same randomly initialised BERT (benchmarks/peer_data.py) on the same
windows (errorseq's demo; the long-tailed lengths of benchmarks/common.py), one after another,
never at once: (a) errorseq's train rule (torchrun, DDP, gloo on CPU), (b) the transformers
Trainer with group_by_length and dynamic padding under torchrun, (c) the MetaSpliceAI recipe
(buckets 256/512/768 tokens, 2/1/1 windows, padded to the bound) through the same Trainer.

What is matched: the optimizer steps (errorseq's steps in `--epochs` epochs, so every peer sees
about the same windows), the mean real tokens per optimizer step (the Trainer's batch size and the
recipe's gradient accumulation are chosen to carry errorseq's), LR, warm-up + cosine schedule,
AdamW, clipping, fp32, seed and initial weights. Tokens per second count only the steps; the
phases around them are timed apart (table 2). ROC-AUC: one scorer for all, on the test split.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import torch

from benchmarks.common import load_line, print_table
from benchmarks.peer_batching import (
    errorseq_batches,
    errorseq_tokens,
    group_by_length_batch_size,
    recipe_accumulation,
    recipe_tokens,
)
from benchmarks.peer_data import (
    MAX_TOKENS,
    demo_windows,
    long_tail_windows,
    run_rule,
    save_model,
    train_sequences,
)
from benchmarks.peer_host import host_rows, host_times
from benchmarks.peer_runs import Launch, PeerResult, run_errorseq, run_trainer
from benchmarks.peer_tables import print_all, versions
from workflow_scripts.training.batches import load_split

TOOLS = ("errorseq", "trainer", "recipe")
PRESETS = {
    "full": {"demo_genes": 2000, "long_tail": {"train": 768, "val": 256, "test": 384}},
    "quick": {"demo_genes": 150, "long_tail": {"train": 48, "val": 24, "test": 32}},
}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny data (a smoke test; numbers meaningless)")
    parser.add_argument("--work-dir", default="/tmp/errorseq-bench/peers", help="data, models and runs")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--ranks", type=int, default=2, help="processes (GPUs with --device cuda)")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="cores shared by the ranks")
    parser.add_argument("--model", choices=("small", "base"), default="small", help="BERT size (peer_data)")
    parser.add_argument("--tokens-per-rank", type=int, default=2048, help="errorseq's bucket token budget")
    parser.add_argument("--epochs", type=int, default=1, help="errorseq epochs; the peers take as many steps")
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data", nargs="+", default=["demo", "long_tail"], choices=("demo", "long_tail"))
    parser.add_argument("--tools", nargs="+", default=list(TOOLS), choices=TOOLS, help="errorseq runs first")
    return parser.parse_args(argv)


def bucket(name: str, windows: Path, model_dir: Path, tokens_per_rank: int, folder: Path) -> dict:
    """errorseq's bucket rule (it tokenises every window to count its tokens), timed."""
    folder.mkdir(parents=True, exist_ok=True)
    config = {
        "bucket": {"max_tokens_per_batch": tokens_per_rank, "max_length": MAX_TOKENS},
        "tokenizer": {"kind": "auto"},
        "model": {"backbone": "hf", "path": str(model_dir)},
    }
    manifest, summary = folder / "manifest.parquet", folder / "summary.json"
    began = time.time()
    run_rule(
        [
            "workflow_scripts.rules.bucket",
            *("--windows", str(windows), "--out-manifest", str(manifest), "--out-summary", str(summary)),
            *("--config", json.dumps(config)),
        ],
        folder / "bucket.log",
    )
    return {
        "name": name,
        "windows": str(windows),
        "manifest": str(manifest),
        "summary": str(summary),
        "bucket_s": time.time() - began,
    }


def prepare(args: argparse.Namespace, work: Path) -> tuple[Path, list[dict]]:
    preset = PRESETS["quick" if args.quick else "full"]
    demo = demo_windows(work / "demo", preset["demo_genes"])
    model_dir = save_model(
        work / f"bert-{args.model}-seed{args.seed}", train_sequences(demo), args.model, args.seed
    )
    sources = {"demo": demo}
    if "long_tail" in args.data:
        sources["long_tail"] = long_tail_windows(work / "long_tail", model_dir, preset["long_tail"])
    sets = [
        bucket(name, sources[name], model_dir, args.tokens_per_rank, work / "runs" / name / "buckets")
        for name in args.data
    ]
    return model_dir, sets


def plans(data: dict, launch: Launch) -> dict:
    """errorseq's steps and mean real tokens per step, and the peers' settings that match them."""
    summary = json.loads(Path(data["summary"]).read_text())
    train = load_split(data["windows"], data["manifest"], "train")
    steps = errorseq_batches(
        train.buckets, summary["batch_sizes"], train.token_lengths, launch.ranks, launch.seed, 0
    )
    real_per_step = errorseq_tokens(steps, train.token_lengths, MAX_TOKENS).real / len(steps)
    recipe = recipe_tokens(train.token_lengths, launch.seed)
    total = len(steps) * launch.epochs
    common = {"steps": total, "eval_every": len(steps)}
    return {
        "errorseq": {"batch_sizes": summary["batch_sizes"], "real_per_step": real_per_step},
        "trainer": {
            **common,
            "batching": "group_by_length",
            "batch_size": group_by_length_batch_size(real_per_step, launch.ranks, train.token_lengths.mean()),
            "accumulation": 1,
        },
        "recipe": {
            **common,
            "batching": "recipe",
            "batch_size": 1,  # unused: the recipe's sampler sets 2/1/1
            "accumulation": recipe_accumulation(real_per_step, launch.ranks, recipe.real / recipe.batches),
        },
        "n_train": len(train),
    }


def run_set(
    data: dict, model_dir: Path, launch: Launch, work: Path, tools: list[str]
) -> list[tuple[PeerResult, str]]:
    """The peers one after another (never at once), errorseq first: the tables' baseline."""
    plan = plans(data, launch)
    runs = work / "runs" / data["name"]
    starts = {
        "errorseq": lambda: run_errorseq(data, model_dir, launch, runs / "errorseq"),
        "trainer": lambda: run_trainer(data, model_dir, launch, runs / "trainer", plan["trainer"]),
        "recipe": lambda: run_trainer(data, model_dir, launch, runs / "recipe", plan["recipe"]),
    }
    results = []
    for tool in TOOLS:
        if tool not in tools:
            continue
        before = os.getloadavg()[0]
        result = starts[tool]()
        result.extra.update(plan=plan[tool], n_train=plan["n_train"], bucket_s=data["bucket_s"])
        results.append((result, f"{before:.1f} → {os.getloadavg()[0]:.1f}"))
        print(
            f"peers: {data['name']}: {result.tool}: {result.steps} steps, {result.train_s:.1f} s of steps",
            flush=True,
        )
    return results


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")  # one thread, as in every rank
    if args.device == "cuda" and not torch.cuda.is_available():
        sys.exit("peers: --device cuda but CUDA is not available")
    work = Path(args.work_dir) / ("quick" if args.quick else "full")
    launch = Launch(args.ranks, args.threads, args.device, args.seed, args.lr, args.epochs)
    began, load_at_start = time.time(), load_line()
    model_dir, sets = prepare(args, work)
    if "errorseq" not in args.tools:
        sys.exit("peers: --tools must include errorseq (every ratio is to it)")
    results = {data["name"]: run_set(data, model_dir, launch, work, args.tools) for data in sets}
    machine = f"{platform.machine()}, {os.cpu_count()} CPUs" + (
        f", {torch.cuda.get_device_name()}" if args.device == "cuda" else ""
    )
    header = (
        f"{args.model} BERT, {launch.ranks} ranks on {args.device}, {machine}; {load_at_start} at the start, "
        f"{load_line()} at the end, {time.time() - began:.0f} s in all"
    )
    host = [
        row
        for data in sets
        for row in host_rows(
            data["name"], host_times(data, model_dir, launch.ranks, args.seed, 30, 2, args.device)
        )
    ]
    print(f"\n{versions()}")
    print_all(results, header)
    print_table(
        "Host time per step, ms (one process and thread, rank 0's batches of errorseq's first 30 steps, "
        "best of 2; % of a step = of this + the model's maths)",
        ["data", "part", "ms per step"],
        host,
    )


if __name__ == "__main__":
    main()
