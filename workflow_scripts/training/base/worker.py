"""One train_base process; torchrun starts one per GPU (or CPU process, gloo):

    torchrun --standalone --nproc_per_node 2 -m workflow_scripts.training.base.worker \\
        --launch-file results/train_base/runs/rs10/launch.json

The launch file (run_files.py) holds the run's files and the train_base section the rule's process
completed and checked. A stop signal (SIGTERM, SIGUSR1, SIGINT) saves a checkpoint and exits with
128 + its number; a rerun resumes.
"""

from __future__ import annotations

import argparse
import os
import sys

from workflow_scripts.errors import InputError, run_cli
from workflow_scripts.training.base.export import export
from workflow_scripts.training.base.loop import BaseTrainer
from workflow_scripts.training.base.run_files import read_launch_file
from workflow_scripts.training.distributed import DistContext, exit_without_teardown, run_in_process_group
from workflow_scripts.training.host_memory import keep_freed_memory
from workflow_scripts.training.stop_signal import StopRequest, TrainingInterrupted

PEER_FAILURE_GRACE_S = 10


def train_and_export(launch_file: str, ctx: DistContext) -> None:
    run, section, _ = read_launch_file(launch_file)
    kept = ctx.device.type == "cpu" and keep_freed_memory()
    trainer = BaseTrainer(run, section, ctx)
    if ctx.is_main:
        print(f"train_base rs{run.seed}: {trainer.describe()}", flush=True)
        if kept:
            print("note: freed host memory kept for the next step (glibc mallopt)", flush=True)
        for note in trainer.start.notes:
            print(f"note: {note}", flush=True)
    trainer.curves.say(f"{trainer.total_steps} optimizer steps in {section.epochs} epochs")
    try:
        trainer.train()
    except TrainingInterrupted as stopped:
        trainer.curves.say(str(stopped))
        raise
    state = trainer.final_state()  # collective
    if ctx.is_main:
        trainer.curves.close()
        export(trainer, state)
        trainer.checkpoints.mark_finished()
        trainer.curves.say(f"done: {run.out_model} ({trainer.position.step} optimizer steps)")


def main(argv: list[str] | None = None) -> None:
    StopRequest.install()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--launch-file", required=True, help="launch.json, written by rules/train_base")
    launch_file = parser.parse_args(argv).launch_file
    run, section, _ = read_launch_file(launch_file)
    try:
        run_in_process_group(section.strategy, run.seed, lambda ctx: train_and_export(launch_file, ctx))
    except TrainingInterrupted as stopped:
        if int(os.environ.get("RANK", "0")) == 0:
            print(f"errorseq: train_base: {stopped} (rerun to resume)", file=sys.stderr, flush=True)
        sys.exit(128 + stopped.signum)
    except (InputError, OSError, FloatingPointError):
        raise
    except Exception:
        if StopRequest.arrives_within(PEER_FAILURE_GRACE_S):
            sys.exit(128 + StopRequest.signum)
        raise


if __name__ == "__main__":
    exit_without_teardown(lambda: run_cli(main))
