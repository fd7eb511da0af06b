"""node_torchrun under a real torchrun: the rank that died is named the moment it died. The
launcher's parts: tests/unit/test_launch.py."""

import re
import sys


def test_node_torchrun_names_the_rank_that_died_the_moment_it_died(tmp_path):
    """One line for the killed rank, though torchrun first stops the other one (rank 0 takes
    its time: a 30 s cleanup that srun cuts short on a real multi-node job)."""
    import subprocess
    import time

    from tests.workflow_helpers import subprocess_env

    script = tmp_path / "ranks.py"
    script.write_text(
        "import os, signal, time\n"
        "signal.signal(signal.SIGTERM, lambda *_: time.sleep(20))\n"  # rank 0 ignores the stop for a while
        "time.sleep(2)\n"
        "if os.environ['RANK'] == '1':\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
        "time.sleep(60)\n"
    )
    command = [sys.executable, "-m", "workflow_scripts.training.node_torchrun", "--standalone",
               "--nproc_per_node=2", str(script)]  # fmt: skip
    began = time.monotonic()
    process = subprocess.Popen(command, env=subprocess_env(), stderr=subprocess.PIPE, text=True)
    first = next(line for line in process.stderr if line.startswith("errorseq:"))
    seconds = time.monotonic() - began
    process.kill()
    process.wait()
    assert re.fullmatch(
        r"errorseq: node \S+: rank 1 \(local rank 1, pid \d+\) was killed by SIGKILL\n", first
    )
    assert seconds < 15, seconds  # not after rank 0's 20 s
