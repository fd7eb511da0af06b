"""CPU scaling of `train` over nodes and ranks on the two-node test cluster (root only).

    python -m benchmarks.multinode [--genes 1000] [--epochs 2] [--shapes 1x1,1x2,2x1,2x2]

Starts the cluster of testkit/multinode_cluster.py (two slurmd nodes in network namespaces on
this one machine), makes the demo's fp_vs_tp windows and buckets with the workflow itself
(local Snakemake), then submits one SLURM job per shape NODESxRANKS that runs the train
rule's entry point as the workflow would (gloo, one OpenMP thread per rank). The table gives
the last epoch's training time (the sum of its optimizer steps' wall time, from steps.jsonl;
no validation, no start-up), windows per second over it, and the whole job's wall time.
Both "nodes" share this machine's CPUs: read the table as the cost of the multi-node path
(srun, c10d rendezvous, gloo over a bridge), not as what more nodes would buy.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.inputs import demo_buckets
from benchmarks.tables import load_line, print_table
from testkit.multinode_cluster import multinode_cluster, why_multinode_cannot_run
from testkit.rule_commands import train_path_args

EXPERIMENT = "fp_vs_tp"


def train_command(inputs: dict[str, Path], out: Path, nodes: int, ranks: int, epochs: int) -> list[str]:
    sections = {
        "model": {},
        "train": {"epochs": epochs, "log_every_steps": 1, "checkpoint_every_steps": 10**6},
    }
    return [
        sys.executable,
        "-m",
        "workflow_scripts.rules.train",
        "--config",
        json.dumps(sections),
        *train_path_args(inputs, out, EXPERIMENT),
        "--gpus",
        "0",
        "--cpu-procs",
        str(ranks),
        "--threads",
        str(nodes * ranks),
        "--nodes",
        str(nodes),
    ]


def run_job(cluster, command: list[str], nodes: int, ranks: int, out: Path) -> float:
    """One sbatch job (nodes × ranks CPUs), waited for; the seconds its script ran."""
    out.mkdir(parents=True)
    script = out / "job.sh"
    script.write_text(
        "#!/bin/sh\ndate +%s.%N > began\n" + subprocess.list2cmdline(command) + "\ndate +%s.%N > ended\n"
    )
    options = [f"--nodes={nodes}", f"--ntasks={nodes}", "--ntasks-per-node=1", f"--cpus-per-task={ranks}"]
    cluster.run("sbatch", "--wait", *options, "--mem=1000", f"--output={out / 'job.log'}", f"--chdir={out}",
                str(script), check=False, timeout=3600)  # fmt: skip
    if not (out / "ended").exists() or not (out / "steps.jsonl").exists():
        sys.exit(f"{nodes}x{ranks} failed:\n{(out / 'job.log').read_text()[-4000:]}")
    return float((out / "ended").read_text()) - float((out / "began").read_text())


def last_epoch(steps_jsonl: Path) -> tuple[int, float, int]:
    """(optimizer steps, seconds, training windows) of the last epoch (every rank's windows)."""
    records = [json.loads(line) for line in steps_jsonl.read_text().splitlines() if line.strip()]
    train = [r for r in records if r["kind"] == "train"]
    steps = [r for r in train if r["epoch"] == max(r["epoch"] for r in train)]
    seconds = sum(r["step_s"] for r in steps)  # log_every_steps 1: one record per step
    return len(steps), seconds, round(sum(r["windows_per_s"] * r["step_s"] for r in steps))


def shape_row(cluster, inputs: dict[str, Path], work: Path, shape: str, epochs: int) -> list:
    """One NODESxRANKS job: its last epoch's steps, windows and seconds, and the job's wall time."""
    nodes, ranks = (int(part) for part in shape.split("x"))
    before = load_line().split(" on ")[0]
    command = train_command(inputs, work / shape, nodes, ranks, epochs)
    wall = run_job(cluster, command, nodes, ranks, work / shape)
    steps, seconds, windows = last_epoch(work / shape / "steps.jsonl")
    print(f"{shape}: {seconds:.1f} s per epoch, job {wall:.0f} s", file=sys.stderr, flush=True)
    return [shape, nodes * ranks, steps, windows, seconds, windows / seconds, wall, before]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--genes", type=int, default=1000, help="demo genes (3 calls each)")
    parser.add_argument("--epochs", type=int, default=2, help="the last one is timed")
    parser.add_argument("--shapes", default="1x1,1x2,2x1,2x2", help="NODESxRANKS, comma-separated")
    args = parser.parse_args(argv)
    if (reason := why_multinode_cannot_run()) is not None:
        sys.exit(f"cannot start the test cluster: {reason}")
    work = Path(tempfile.mkdtemp(prefix="errorseq-bench-multinode-"))
    inputs = demo_buckets(work / "inputs", EXPERIMENT, demo={"n_genes": args.genes, "calls_per_gene": 3})
    with multinode_cluster() as cluster:
        rows = [shape_row(cluster, inputs, work, shape, args.epochs) for shape in args.shapes.split(",")]
    for row in rows:
        row.insert(6, rows[0][4] / row[4])
    header = [
        "nodes×ranks",
        "world",
        "steps/epoch",
        "windows/epoch",
        "epoch s",
        "windows/s",
        "speed-up",
        "job wall s",
        "load before",
    ]
    print_table(
        f"train on the two-node test cluster: CPU, gloo, {args.genes} demo genes, {load_line()}", header, rows
    )


if __name__ == "__main__":
    main()
