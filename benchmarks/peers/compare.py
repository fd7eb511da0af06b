"""errorseq against the tools users would pick instead: the same BERT fine-tuned on the same windows.

    python -m benchmarks.peers.compare [--quick] [--work-dir DIR]
    python -m benchmarks.peers.compare --device cuda --ranks 1 --model base --tokens-per-rank 12800 --lr 1e-4  # GPU

Three peers train the same randomly initialised BERT (benchmarks/peers/inputs.py) on the same
windows (errorseq's demo; the long-tailed lengths of benchmarks/inputs.py), one after another,
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
import os
import platform
import sys
import time
from pathlib import Path

import torch

from benchmarks.peers.batching import plans
from benchmarks.peers.host import host_times
from benchmarks.peers.inputs import prepare, work_folder
from benchmarks.peers.runs import Launch, PeerResult, run_errorseq, run_trainer
from benchmarks.peers.tables import HOST_HEADER, HOST_TITLE, host_rows, print_all, versions
from benchmarks.tables import load_line, print_table

TOOLS = ("errorseq", "trainer", "recipe")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny data (a smoke test; numbers meaningless)")
    parser.add_argument("--work-dir", default="/tmp/errorseq-bench/peers", help="data, models and runs")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--ranks", type=int, default=2, help="processes (GPUs with --device cuda)")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="cores shared by the ranks")
    parser.add_argument(
        "--model", choices=("small", "base"), default="small", help="BERT size (peers/inputs.py)"
    )
    parser.add_argument("--tokens-per-rank", type=int, default=2048, help="errorseq's bucket token budget")
    parser.add_argument("--epochs", type=int, default=1, help="errorseq epochs; the peers take as many steps")
    parser.add_argument("--lr", type=float, default=Launch.lr)
    parser.add_argument("--seed", type=int, default=Launch.seed)
    parser.add_argument("--data", nargs="+", default=["demo", "long_tail"], choices=("demo", "long_tail"))
    parser.add_argument("--tools", nargs="+", default=list(TOOLS), choices=TOOLS, help="errorseq runs first")
    return parser.parse_args(argv)


def run_set(
    data: dict, model_dir: Path, launch: Launch, work: Path, tools: list[str]
) -> list[tuple[PeerResult, str]]:
    """The peers one after another (never at once), errorseq first: the tables' baseline."""
    plan = plans(data, launch.ranks, launch.seed, launch.epochs)
    runs = work / "runs" / data["name"]
    starts = {
        "errorseq": lambda: run_errorseq(data, model_dir, launch, runs / "errorseq"),
        "trainer": lambda: run_trainer(data, model_dir, launch, runs / "trainer", plan["trainer"]),
        "recipe": lambda: run_trainer(data, model_dir, launch, runs / "recipe", plan["recipe"]),
    }
    results = []
    for tool in (tool for tool in TOOLS if tool in tools):
        before = os.getloadavg()[0]
        result = starts[tool]()
        result.extra.update(plan=plan[tool], n_train=plan["n_train"], bucket_s=data["bucket_s"])
        results.append((result, f"{before:.1f} → {os.getloadavg()[0]:.1f}"))
        print(
            f"peers: {data['name']}: {result.tool}: {result.steps} steps, {result.train_s:.1f} s of steps",
            flush=True,
        )
    return results


def machine(device: str) -> str:
    gpu = f", {torch.cuda.get_device_name()}" if device == "cuda" else ""
    return f"{platform.machine()}, {os.cpu_count()} CPUs{gpu}"


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")  # one thread, as in every rank
    if args.device == "cuda" and not torch.cuda.is_available():
        sys.exit("peers: --device cuda but CUDA is not available")
    work = work_folder(args.work_dir, args.quick)
    launch = Launch(args.ranks, args.threads, args.device, args.seed, args.lr, args.epochs)
    began, load_at_start = time.time(), load_line()
    model_dir, sets = prepare(work, args.quick, args.data, args.model, args.seed, args.tokens_per_rank)
    if "errorseq" not in args.tools:
        sys.exit("peers: --tools must include errorseq (every ratio is to it)")
    results = {data["name"]: run_set(data, model_dir, launch, work, args.tools) for data in sets}
    header = (
        f"{args.model} BERT, {launch.ranks} ranks on {args.device}, {machine(args.device)}; {load_at_start} "
        f"at the start, {load_line()} at the end, {time.time() - began:.0f} s in all"
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
    print_table(HOST_TITLE.format(steps=30, repeats=2), HOST_HEADER, host)


if __name__ == "__main__":
    main()
