"""The ranks' console lines, written by this process through the console descriptor itself.

torchrun starts the ranks without the descriptor (it closes every one but 0-2). A rank that
reopened it by path (/proc/<pid>/fd/3) got a file offset of its own: where the console is a file
(`snakemake ... > run.log 2>&1`), Snakemake kept writing at its own offset, over the ranks' lines.
So the ranks write into a FIFO, and a thread of this process copies what arrives onto the
descriptor, whose offset Snakemake shares: every line lands after the previous one.
"""

from __future__ import annotations

import os
import select
import shutil
import tempfile
import threading

POLL_S = 0.2


class ConsoleRelay:
    """`with ConsoleRelay(fd) as relay:` the ranks open `relay.path` for writing."""

    def __init__(self, descriptor: int):
        self.descriptor = descriptor
        self.folder = tempfile.mkdtemp(prefix="errorseq-console-")
        self.path = os.path.join(self.folder, "console")
        os.mkfifo(self.path)
        self.reader = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)
        self.keeper = os.open(self.path, os.O_WRONLY)  # no end-of-file between one writer and the next
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self.pump, name="console-relay", daemon=True)

    def __enter__(self) -> ConsoleRelay:
        self.thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self.stopping.set()
        self.thread.join()
        for descriptor in (self.keeper, self.reader):
            os.close(descriptor)
        shutil.rmtree(self.folder, ignore_errors=True)

    def pump(self) -> None:
        while True:
            ready, _, _ = select.select([self.reader], [], [], POLL_S)
            data = os.read(self.reader, 1 << 16) if ready else b""
            if data:
                self.write(data)
            elif self.stopping.is_set():
                return

    def write(self, data: bytes) -> None:
        try:
            os.write(self.descriptor, data)
        except OSError:  # the console went away (a closed terminal): the log still has it all
            pass
