"""node_torchrun under a real torchrun: the rank that died is named the moment it died. The
launcher's parts: tests/unit/test_launch.py."""

import contextlib
import os
import re
import signal
import subprocess
import sys
import threading


def test_node_torchrun_names_the_rank_that_died_the_moment_it_died(tmp_path):
    """One line for the killed rank, though torchrun first stops the other one (rank 0 takes
    its time: a 20 s cleanup, as srun cuts short on a real multi-node job). The line comes while
    rank 0 is still cleaning up: an order of events, not a number of seconds, so a slow start
    under load changes nothing."""
    from tests.workflow_helpers import HANG_GUARD_S, subprocess_env

    cleaned_up = tmp_path / "rank0-cleaned-up"
    script = tmp_path / "ranks.py"
    script.write_text(
        "import os, pathlib, signal, sys, time\n"
        "def stop(*_):\n"  # rank 0 takes its time to stop, then says it has
        "    time.sleep(20)\n"
        f"    pathlib.Path({str(cleaned_up)!r}).touch()\n"
        "    sys.exit(0)\n"
        "signal.signal(signal.SIGTERM, stop)\n"
        f"pathlib.Path({str(tmp_path)!r}, 'pid-' + os.environ['RANK']).write_text(str(os.getpid()))\n"
        "time.sleep(2)\n"
        "if os.environ['RANK'] == '1':\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
        "time.sleep(600)\n"
    )
    command = [sys.executable, "-m", "workflow_scripts.training.node_torchrun", "--standalone",
               "--nproc_per_node=2", str(script)]  # fmt: skip
    process = subprocess.Popen(
        command, env=subprocess_env(), stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    guard = threading.Timer(HANG_GUARD_S, os.killpg, (process.pid, signal.SIGKILL))
    guard.start()
    try:
        first = next((line for line in process.stderr if line.startswith("errorseq:")), "no line")
        rank0_done_then = cleaned_up.exists()
    finally:
        guard.cancel()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        for pid_file in tmp_path.glob("pid-*"):  # torchrun starts its ranks in sessions of their own
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid_file.read_text()), signal.SIGKILL)
    assert re.fullmatch(
        r"errorseq: node \S+: rank 1 \(local rank 1, pid \d+\) was killed by SIGKILL\n", first
    ), first
    assert not rank0_done_then  # said before torchrun had stopped rank 0, not after
