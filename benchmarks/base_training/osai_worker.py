"""OpenSpliceAI's own command line (`openspliceai ...`, 0.0.7) in this process, with its training
epochs measured from outside its code:

    python -m benchmarks.base_training.osai_worker [--epochs-log FILE] [--threads N] [--seed S] -- ARGS

ARGS go to `openspliceai.openspliceai.main` unchanged. With --epochs-log, two of its functions are
wrapped (nothing in them changes): `train_epoch`, timed (process CPU seconds: every thread; and
wall seconds), and `clip_datapoints`, which every training batch passes through on its way to the
model, where the batch's labels are counted. Each training epoch appends one JSON line:

    epoch, batches, windows, input_nt (windows × their length as the model reads them),
    labelled_nt (positions whose one-hot label is set: those the loss's sum counts; the unlabelled
    tail of a gene's last window is all zero and not counted), cpu_s and wall_s of the whole
    train_epoch, metrics_cpu_s (its end-of-epoch metrics over the training predictions, inside
    train_epoch), steps_cpu_s = cpu_s - metrics_cpu_s.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path


def parse_args(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    if "--" not in argv:
        raise SystemExit("osai_worker: give OpenSpliceAI's arguments after --")
    cut = argv.index("--")
    parser = argparse.ArgumentParser(prog="osai_worker")
    parser.add_argument("--epochs-log", type=Path, help="one JSON line per training epoch")
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    parser.add_argument("--seed", type=int, default=0, help="Python, NumPy and torch seeds")
    return parser.parse_args(argv[:cut]), argv[cut + 1 :]


class EpochMeter:
    """Counts and times OpenSpliceAI's training epochs through two wrapped functions."""

    def __init__(self, log: Path):
        self.log = log
        self.epoch = 0
        self.counting = False
        self.in_metrics = 0.0
        self.reset()

    def reset(self) -> None:
        self.batches = self.windows = self.input_nt = self.labelled_nt = 0
        self.metrics_cpu_s = 0.0

    def install(self, utils) -> None:
        clip, train_epoch, evaluation = utils.clip_datapoints, utils.train_epoch, utils.model_evaluation

        def counted_clip(X, Y, *args, **kwargs):
            X, Y = clip(X, Y, *args, **kwargs)
            if self.counting:
                self.batches += 1
                self.windows += int(X.shape[0])
                self.input_nt += int(X.shape[0] * X.shape[2])
                self.labelled_nt += int(Y.sum().item())
            return X, Y

        def timed_evaluation(*args, **kwargs):
            began = time.process_time()
            try:
                return evaluation(*args, **kwargs)
            finally:
                if self.counting:
                    self.metrics_cpu_s += time.process_time() - began

        def timed_epoch(*args, **kwargs):
            self.reset()
            self.counting = True
            cpu, wall = time.process_time(), time.perf_counter()
            try:
                return train_epoch(*args, **kwargs)
            finally:
                self.counting = False
                self.write(time.process_time() - cpu, time.perf_counter() - wall)

        utils.clip_datapoints, utils.train_epoch, utils.model_evaluation = (
            counted_clip,
            timed_epoch,
            timed_evaluation,
        )

    def write(self, cpu_s: float, wall_s: float) -> None:
        self.epoch += 1
        record = {
            "epoch": self.epoch,
            "batches": self.batches,
            "windows": self.windows,
            "input_nt": self.input_nt,
            "labelled_nt": self.labelled_nt,
            "cpu_s": round(cpu_s, 3),
            "wall_s": round(wall_s, 3),
            "metrics_cpu_s": round(self.metrics_cpu_s, 3),
            "steps_cpu_s": round(cpu_s - self.metrics_cpu_s, 3),
        }
        with self.log.open("a") as handle:
            handle.write(json.dumps(record) + "\n")
        print(f"osai_worker: epoch {self.epoch}: {json.dumps(record)}", file=sys.stderr, flush=True)


def run_openspliceai(argv: list[str] | None = None) -> None:
    args, osai_args = parse_args(sys.argv[1:] if argv is None else argv)
    import numpy as np
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    import openspliceai.train_base.utils as utils
    from openspliceai import openspliceai as cli

    if args.epochs_log is not None:
        args.epochs_log.parent.mkdir(parents=True, exist_ok=True)
        EpochMeter(args.epochs_log).install(utils)
    cli.main(osai_args)


if __name__ == "__main__":
    run_openspliceai()  # not main(): a helper, not a benchmark of the catalogue
