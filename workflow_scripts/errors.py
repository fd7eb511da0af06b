"""One-line user errors and the CLI wrapper that prints them."""

from __future__ import annotations

import errno
import signal
import sys
from collections.abc import Callable
from pathlib import Path


class InputError(Exception):
    """Bad user input: names the file (or config) and the field (or row) at fault."""

    def __init__(self, source: str | Path, field: str, message: str):
        self.source = str(source)
        self.field = str(field)
        self.message = message
        super().__init__(f"{self.source}: {self.field}: {message}")


def exit_on_terminate(signum, frame) -> None:
    print("errorseq: stopped by SIGTERM; partial outputs removed", file=sys.stderr, flush=True)
    sys.exit(128 + signum)


def run_cli(main: Callable[[list[str] | None], None], argv: list[str] | None = None) -> None:
    """Run a module's main(); an InputError becomes one line on stderr and exit code 2.

    A file the system refuses (an OSError naming it: a full disk, a read-only folder, no
    permission) is one line naming the file and the errno, exit code 2 too. A non-finite loss
    (FloatingPointError from the trainer) is one line, with exit code 1. SIGTERM (Snakemake
    stopping its jobs, SLURM's scancel or time limit) unwinds like an exception, so temporary
    files and part folders are removed on the way out; so does Ctrl-C (KeyboardInterrupt): one
    line and exit code 130, not a traceback in the job's log.
    """
    signal.signal(signal.SIGTERM, exit_on_terminate)
    try:
        main(argv)
    except InputError as error:
        print(f"errorseq: error: {error}", file=sys.stderr, flush=True)
        sys.exit(2)
    except OSError as error:
        if error.filename is None:
            raise
        code = errno.errorcode.get(error.errno or 0, "OSError")
        print(f"errorseq: error: {error.filename}: {code}: {error.strerror}", file=sys.stderr, flush=True)
        sys.exit(2)
    except FloatingPointError as error:
        print(f"errorseq: error: training: {error}", file=sys.stderr, flush=True)
        sys.exit(1)
    except KeyboardInterrupt:
        print("errorseq: stopped by Ctrl-C (SIGINT); partial outputs removed", file=sys.stderr, flush=True)
        sys.exit(128 + signal.SIGINT)
