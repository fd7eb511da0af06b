"""One node's torchrun in a multi-node job (training.launch starts it on every node with srun).

    python -m workflow_scripts.training.node_torchrun <torchrun arguments>

It is torchrun itself, run in this process, plus one line for each training process of this
node that fails, naming the node and the global rank, written the moment the process dies:

    errorseq: node node2: rank 2 (local rank 0, pid 4242) was killed by SIGKILL

torchrun's own report comes too late for that: it first stops the node's other ranks (up to
30 s), and by then srun has often ended this node because another node's ranks failed first
(their peer vanished). So a thread watches the workers (Linux: waitid without reaping them).
A rank that ends because it was asked to stop (SIGTERM, SIGINT: it saved a checkpoint and said
so) is not reported. Exit codes and the rest of the output as in training.local_torchrun.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
import threading
import time
from pathlib import Path

from workflow_scripts.training.local_torchrun import STOPPED, run_torchrun

SIGNALLED = {os.CLD_KILLED, os.CLD_DUMPED}


def how_it_ended(exitcode: int) -> str:
    """exitcode as torchrun gives it: negative = killed by that signal."""
    if exitcode < 0:
        return f"was killed by {signal.Signals(-exitcode).name}"
    return f"exited with code {exitcode}"


class WorkerWatch:
    """Reports each failed worker of this process the moment it dies, before torchrun reaps it:
    one thread blocks in waitid (WNOWAIT: the exit status stays for torchrun), another notes
    every new worker's RANK while it can still be read."""

    def __init__(self, host: str):
        self.host = host
        self.ranks: dict[int, tuple[str, str]] = {}  # pid -> (RANK, LOCAL_RANK)
        self.reported: set[int] = set()

    def start(self) -> None:
        for target in (self.watch_exits, self.watch_starts):
            threading.Thread(target=target, name=f"errorseq-{target.__name__}", daemon=True).start()

    def watch_exits(self) -> None:
        while True:
            try:
                info = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOWAIT)
            except ChildProcessError:  # no workers (yet)
                time.sleep(0.1)
                continue
            if info is None or info.si_pid in self.reported:  # still waiting to be reaped
                time.sleep(0.02)
                continue
            self.reported.add(info.si_pid)
            exitcode = -info.si_status if info.si_code in SIGNALLED else info.si_status
            if exitcode != 0 and exitcode not in STOPPED:
                self.report(info.si_pid, exitcode)

    def watch_starts(self) -> None:
        children = Path(f"/proc/{os.getpid()}/task/{os.getpid()}/children")
        while True:
            try:
                pids = [int(pid) for pid in children.read_text().split()]
            except OSError:
                return
            for pid in pids:
                if pid not in self.ranks and (ranks := rank_of(pid)) is not None:
                    self.ranks[pid] = ranks
            time.sleep(0.2)

    def report(self, pid: int, exitcode: int) -> None:
        """Workers only (a rank in their environment): torchrun's report covers any other child."""
        if pid in self.ranks:
            rank, local_rank = self.ranks[pid]
            say(
                f"node {self.host}: rank {rank} (local rank {local_rank}, pid {pid}) {how_it_ended(exitcode)}"
            )


def rank_of(pid: int) -> tuple[str, str] | None:
    """RANK and LOCAL_RANK that torchrun gave one worker (None: not readable, or not yet exec'd)."""
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return None
    values = dict(item.decode(errors="replace").split("=", 1) for item in environ if b"=" in item)
    if "RANK" not in values:
        return None
    return values["RANK"], values.get("LOCAL_RANK", "?")


def say(message: str) -> None:
    print(f"errorseq: {message}", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> None:
    """torchrun with local_torchrun's exit codes and quiet ends, plus the watch's lines."""
    watch = WorkerWatch(socket.gethostname())
    watch.start()
    try:
        run_torchrun(sys.argv[1:] if argv is None else argv)
    except Exception as error:  # the rendezvous: a node that never joined, a silent store
        say(f"node {watch.host}: torchrun failed: {type(error).__name__}: {error}")
        sys.exit(1)


if __name__ == "__main__":
    main()
