"""List and run errorseq's benchmarks by name (benchmarks/catalogue.py).

    python -m benchmarks [list]                   # every benchmark: name, question, needs
    python -m benchmarks run padding dryrun       # by name, at full size
    python -m benchmarks run peers -- --seed 1    # arguments after -- go to the one benchmark
    python -m benchmarks run --default [--quick]  # `make bench`: the CPU set
    python -m benchmarks run --all --quick        # every benchmark this machine can run, smallest size

Each run prints a line with the date, machine, load and command above its tables, so that the
tables paste into docs/performance.md dated. --quick runs the smallest size (numbers meaningless:
does it still run?).
"""

from __future__ import annotations

import argparse
import datetime
import importlib
import platform
import shlex
import sys
import tempfile
from pathlib import Path

from benchmarks.catalogue import BENCHMARKS, Benchmark, by_name, missing
from benchmarks.tables import load_line, print_table
from workflow_scripts.errors import run_cli


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command")
    commands.add_parser("list", help="every benchmark")
    run = commands.add_parser("run", help="run benchmarks by name")
    run.add_argument("names", nargs="*", help="benchmarks to run (see list)")
    run.add_argument("--default", action="store_true", help="the set `make bench` runs")
    run.add_argument("--all", action="store_true", help="every benchmark this machine can run")
    run.add_argument("--quick", action="store_true", help="each at its smallest size")
    return parser.parse_args(argv)


def machine() -> str:
    import numpy as np
    import torch

    processor = platform.processor() or platform.machine()
    return (
        f"{processor}, Python {platform.python_version()}, numpy {np.__version__}, torch {torch.__version__}"
    )


def print_list() -> None:
    rows = [
        [
            b.name,
            b.question,
            b.needs or "—",
            "yes" if b.default else "",
            "yes" if b.quick is not None else "no",
        ]
        for b in BENCHMARKS
    ]
    print_table("errorseq benchmarks", ["name", "question", "needs", "make bench", "quick form"], rows)


def chosen(args: argparse.Namespace) -> list[Benchmark]:
    if args.default:
        return [b for b in BENCHMARKS if b.default]
    if args.all:
        return [b for b in BENCHMARKS if missing(b) is None and not (args.quick and b.quick is None)]
    if not args.names:
        raise SystemExit("run: name benchmarks, or --default, or --all")
    return [by_name(name) for name in args.names]


def arguments(benchmark: Benchmark, quick: bool, extra: list[str], work: Path) -> list[str]:
    if quick and benchmark.quick is None:
        raise SystemExit(f"{benchmark.name} has no quick form")
    smallest = shlex.split(benchmark.quick or "") if quick else []
    return [arg.replace("{work}", str(work / benchmark.name)) for arg in smallest] + extra


def run(benchmark: Benchmark, argv: list[str]) -> None:
    """The benchmark's main(argv) in this process, under its date, machine, load and command."""
    command = shlex.join(["python", "-m", benchmark.module, *argv])
    today = datetime.date.today().isoformat()
    print(f"\n## {benchmark.name}: {today}, {platform.machine()}, {load_line()}; `{command}`", flush=True)
    importlib.import_module(benchmark.module).main(argv)


def main(argv: list[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    extra = argv[argv.index("--") + 1 :] if "--" in argv else []
    args = parse_args(argv[: argv.index("--")] if "--" in argv else argv)
    if args.command in (None, "list"):
        print_list()
        return
    benchmarks = chosen(args)
    if extra and len(benchmarks) != 1:
        raise SystemExit("arguments after -- go to one benchmark")
    print(f"# errorseq benchmarks\n\n{machine()}; {load_line()} at the start", flush=True)
    with tempfile.TemporaryDirectory(prefix="errorseq-bench-") as work:
        for benchmark in benchmarks:
            run(benchmark, arguments(benchmark, args.quick, extra, Path(work)))


if __name__ == "__main__":
    run_cli(main)  # a benchmark's bad input (a missing folder, an unreadable table): one line, exit 2
