"""Ctrl-C on a run: one line, not Snakemake's report of every interrupted job.

A terminal's Ctrl-C reaches Snakemake and its running jobs at once. The jobs stop (each one line in
its log: errors.run_cli), and Snakemake then reports each as a failed job: the whole shell line
with its --config JSON (kilobytes), the job's log, and `WorkflowError: At least one job did not
complete successfully.` None of that is an error the user has to read. `quiet_interrupt`, called
by rules/common.smk in Snakemake's main process, says once what happens and silences Snakemake's
log from then on; Snakemake goes on as after any Ctrl-C (it stops the jobs, removes their
incomplete outputs, releases its lock) and exits non-zero. A second Ctrl-C is Snakemake's own.
"""

from __future__ import annotations

import logging
import signal
import sys
import threading

STOPPING = (
    "errorseq: stopping on Ctrl-C: the running jobs are stopped and their partial outputs removed; "
    "finished outputs are kept, and the same command goes on from there"
)


def quiet_interrupt() -> bool:
    """Install the handler (main thread only: Python's rule for signal handlers); True if done."""
    if threading.current_thread() is not threading.main_thread():
        return False
    said = threading.Event()
    previous_hook = sys.excepthook

    def on_interrupt(signum, frame):
        if said.is_set():
            signal.default_int_handler(signum, frame)
        said.set()
        print(STOPPING, file=sys.stderr, flush=True)
        logging.disable(logging.CRITICAL)  # Snakemake logs through `logging`
        signal.default_int_handler(signum, frame)  # KeyboardInterrupt: Snakemake stops its jobs

    def no_traceback_for_ctrl_c(kind, value, traceback):
        if said.is_set() and issubclass(kind, KeyboardInterrupt):
            return  # raised outside Snakemake's scheduler (planning the DAG): the line said it
        previous_hook(kind, value, traceback)

    signal.signal(signal.SIGINT, on_interrupt)
    sys.excepthook = no_traceback_for_ctrl_c
    return True
