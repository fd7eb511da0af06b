"""Base-model forward alone: the ceiling that score_base_model's throughput approaches.

    python -m benchmarks.scoring.forward [--chunk-length 40000] [--batch-sizes 4,32]
                                 [--precisions fp32,bf16,fp16] [--seconds 5] [--device auto]

Runs score_base_model's batches (`RegionScorer.runner`, calling/batch_runner.py: the bases copied
to the device, one-hot and reverse complement there, the five SpliceAI-10k models, the scores
copied back to the host; on a GPU asynchronously, batches queued ahead as in scoring) on random
chunks of `--chunk-length` scored positions plus the model's context, as many batches as fit in
`--seconds`, after a warm-up. Nothing else of
score_base_model runs: no regions, no reading of the genome, no tables. Prints scored nt per second,
the convolution arithmetic achieved and the time per batch; the precision benchmark's nt per wall
second over real genes, set beside this, says how much of the scoring time is the model's.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from benchmarks.scoring.precision import conv_flops_per_input_nt
from benchmarks.scoring.region import spliceai_ensemble
from benchmarks.tables import load_line, print_table


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def run_batch(scorer, codes: np.ndarray, minus: np.ndarray) -> None:
    """Stage one batch and queue it (the batches `depth` back are read as scoring reads them)."""
    staged_codes, staged_minus = scorer.runner.stage(*codes.shape)
    staged_codes[:], staged_minus[:] = codes, minus
    scorer.runner.launch(list(range(len(codes))), codes.shape[1])


def time_batches(scorer, codes: np.ndarray, minus: np.ndarray, seconds: float) -> tuple[int, float]:
    """(batches run, wall seconds) of the same batch, after two warm-up batches; every batch's
    scores are back on the host when the clock stops."""
    for _ in range(2):
        run_batch(scorer, codes, minus)
    scorer.runner.drain()
    synchronize(scorer.device)
    batches, began = 0, time.perf_counter()
    while batches == 0 or time.perf_counter() - began < seconds:
        run_batch(scorer, codes, minus)
        batches += 1
    scorer.runner.drain()
    synchronize(scorer.device)
    return batches, time.perf_counter() - began


def case_row(ensemble, precision: str, batch_size: int, args) -> list:
    from workflow_scripts.calling.device import resolve_device
    from workflow_scripts.calling.scoring import RegionScorer

    device = resolve_device(args.device)
    scorer = RegionScorer(ensemble, None, device, batch_size, args.chunk_length, precision)
    input_length = args.chunk_length + ensemble.context
    rng = np.random.default_rng(0)
    codes = rng.choice(np.frombuffer(b"ACGT", np.uint8), size=(batch_size, input_length))
    minus = np.arange(batch_size) % 2 == 1
    batches, seconds = time_batches(scorer, codes, minus, args.seconds)
    flop = conv_flops_per_input_nt(ensemble) * batch_size * input_length * batches
    return [
        precision,
        device.type,
        batch_size,
        batches,
        batch_size * args.chunk_length * batches / seconds,
        flop / seconds / 1e12,
        1000 * seconds / batches,
    ]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunk-length", type=int, default=40_000, help="scored positions per chunk")
    parser.add_argument("--batch-sizes", default="4,32", help="comma-separated chunks per batch")
    parser.add_argument("--precisions", default="fp32,bf16,fp16", help="comma-separated")
    parser.add_argument("--seconds", type=float, default=5.0, help="timed seconds per case")
    parser.add_argument("--threads", type=int, default=2, help="torch CPU threads")
    parser.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    parser.add_argument("--emulated", action="store_true", help="allow bf16/fp16 without fast kernels")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    from workflow_scripts.calling import device

    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    if args.emulated:
        device.fast_on = lambda *_: True
    ensemble = spliceai_ensemble()
    rows = [
        case_row(ensemble, precision, int(batch_size), args)
        for precision in args.precisions.split(",")
        for batch_size in args.batch_sizes.split(",")
    ]
    print_table(
        f"Base-model forward alone (5 SpliceAI-10k models, RegionScorer.runner) on random chunks of "
        f"{args.chunk_length:,} nt + {ensemble.context:,} context; {load_line()}",
        ["precision", "device", "batch", "batches", "scored nt per s", "conv TFLOP/s", "ms per batch"],
        rows,
    )


if __name__ == "__main__":
    main()
