"""One training process; torchrun starts one per GPU (or CPU process) for the rules train and
pretrain (workflow_scripts.rules.train / .pretrain start torchrun through training.launch).

    torchrun --standalone --nproc_per_node 2 -m workflow_scripts.training.worker \\
        --launch-file results/fp_vs_tp/model/launch.json

The launch file (training/run_spec.py) holds the objective, the run's files and the config
sections the rule's process completed and checked; they are used as they are. A plain
`python -m workflow_scripts.training.worker --launch-file ...` trains in one process.
"""

from __future__ import annotations

import argparse
import os
import sys

from workflow_scripts.errors import InputError, run_cli
from workflow_scripts.training.distributed import exit_without_teardown, run_in_process_group
from workflow_scripts.training.objectives import build_objective
from workflow_scripts.training.run import run
from workflow_scripts.training.run_spec import read_launch_file
from workflow_scripts.training.stop_signal import StopRequest, TrainingInterrupted

PEER_FAILURE_GRACE_S = 10  # torchrun notices a failed rank in well under a second, then stops the rest


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--launch-file", required=True, help="launch.json, written by training.launch")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    """A stop signal (SIGTERM, SIGUSR1, SIGINT) saves a checkpoint; rank 0 says so in one line
    and every rank exits with 128 + the signal's number, without a traceback. A rank whose
    collective fails because another rank failed exits quietly when torchrun stops it."""
    StopRequest.install()
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    name, sections, spec = read_launch_file(parse_args(argv).launch_file)
    train = sections["train"]  # for masked_lm, with pretrain:'s epochs, lr and max_steps already
    objective = build_objective(name, train.objective_settings(), sections["model"], sections.get("pretrain"))
    try:
        run_in_process_group(train.strategy, train.seed, lambda ctx: run(objective, train, spec, ctx))
    except TrainingInterrupted as stopped:
        if rank() == 0:
            print(f"errorseq: training: {stopped} (rerun to resume)", file=sys.stderr, flush=True)
        sys.exit(128 + stopped.signum)
    except (InputError, OSError, FloatingPointError):
        raise  # run_cli reports them in one line
    except Exception:  # e.g. a collective whose peer is gone ("Connection closed by peer")
        if StopRequest.arrives_within(PEER_FAILURE_GRACE_S):  # torchrun stops this rank: another
            sys.exit(128 + StopRequest.signum)  # failed first, and its line or torchrun says why
        raise


def rank() -> int:
    return int(os.environ.get("RANK", "0"))


if __name__ == "__main__":
    exit_without_teardown(lambda: run_cli(main))
