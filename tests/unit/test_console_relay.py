"""The ranks' console lines reach a console that is a file, between the launcher's own lines."""

from __future__ import annotations

import os
import subprocess
import sys

from workflow_scripts.training.console_relay import ConsoleRelay

RANK = "import sys\nwith open(sys.argv[1], 'a', buffering=1) as console:\n    for i in range(3):\n        print(f'rank line {i}', file=console)\n"


def test_rank_lines_and_the_launchers_share_one_file_offset(tmp_path):
    """Like `snakemake > run.log 2>&1`: the descriptor is a file opened without O_APPEND."""
    log = tmp_path / "run.log"
    descriptor = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.write(descriptor, b"snakemake before\n")
    with ConsoleRelay(descriptor) as relay:
        subprocess.run([sys.executable, "-c", RANK, relay.path], check=True, close_fds=True)
        folder = os.path.dirname(relay.path)
    os.write(descriptor, b"snakemake after\n")
    os.close(descriptor)
    assert log.read_text().splitlines() == [
        "snakemake before",
        "rank line 0",
        "rank line 1",
        "rank line 2",
        "snakemake after",
    ]
    assert not os.path.exists(folder)
