"""torchrun on one node, run in the launcher's own process (training.launch), so that a run that
a rank already explained in one line ends with that line, not with torchrun's traceback.

- A stop signal (Ctrl-C's SIGINT, SIGTERM from a scheduler): torchrun passes it to the ranks,
  which save a checkpoint and say so in one line; this process then exits with 128 + the signal's
  number and prints nothing more.
- A rank that ended with a one-line error (exit code 2: an input, config or file-system error)
  or stopped by a signal (128 + its number): the same exit code, nothing more.
- Any other failure (a rank killed, a crash): torchrun's report of the failed ranks (rank, exit
  code, signal), without the launcher's own traceback; exit code 1.
"""

from __future__ import annotations

import logging
import signal
import sys
from typing import NoReturn

from torch.distributed.elastic.multiprocessing.api import SignalException
from torch.distributed.elastic.multiprocessing.errors import ChildFailedError
from torch.distributed.run import parse_args, run

ONE_LINE_ERROR = 2  # errors.run_cli: InputError, or an OSError naming its file
STOPPED = {128 + s for s in (signal.SIGTERM, signal.SIGUSR1, signal.SIGINT)}  # worker.main
REPORTED_EXIT_CODES = {ONE_LINE_ERROR} | STOPPED
FAILURE_LOGGER = "torch.distributed.elastic.multiprocessing.api"


class HideReportedFailures(logging.Filter):
    """Drops torchrun's 'failed (exitcode: N)' line for the exit codes a rank explained itself,
    and its 'Sending process P closing signal S' lines (one per rank stopped after a failure)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = str(record.msg)
        code = record.args[0] if isinstance(record.args, tuple) and record.args else None
        if message.startswith("failed (exitcode") and code in REPORTED_EXIT_CODES:
            return False
        return not message.startswith("Sending process")


def run_torchrun(args: list[str]) -> NoReturn:
    """`python -m torch.distributed.run <args>`, in this process; never returns."""
    logging.getLogger(FAILURE_LOGGER).addFilter(HideReportedFailures())
    try:
        run(parse_args(args))
    except SignalException as error:
        sys.exit(128 + int(error.sigval))
    except ChildFailedError as error:
        _, first = error.get_first_failure()
        if first.exitcode in REPORTED_EXIT_CODES:
            sys.exit(first.exitcode)
        print(error.format_msg(), file=sys.stderr, flush=True)
        sys.exit(1)
    sys.exit(0)
