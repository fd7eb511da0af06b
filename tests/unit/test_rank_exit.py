"""How a training rank ends (training.distributed.exit_without_teardown): main's exit status,
its output flushed to a pipe, and no interpreter teardown (atexit handlers do not run)."""

import subprocess
import sys
import textwrap

import pytest

from tests.train_fixtures import ROOT
from tests.workflow_helpers import HANG_GUARD_S

MAINS = {
    "returns": ("print('trained')", 0, "trained", ""),
    "exits_3": ("print('stopping'); sys.exit(3)", 3, "stopping", ""),
    "exits_with_message": ("sys.exit('bye')", 1, "", "bye"),
    "raises": ("raise ValueError('broken batch')", 1, "", "ValueError: broken batch"),
    "input_error": (
        "raise InputError('cfg.yaml', 'train.lr', 'must be > 0')",
        2,
        "",
        "errorseq: error: cfg.yaml: train.lr",
    ),
}


@pytest.mark.parametrize("case", MAINS)
def test_a_rank_exits_with_mains_status_and_output_without_teardown(case):
    body, status, stdout, stderr = MAINS[case]
    program = textwrap.dedent(
        f"""
        import atexit, sys
        from workflow_scripts.errors import InputError, run_cli
        from workflow_scripts.training.distributed import exit_without_teardown
        atexit.register(lambda: print("teardown ran"))
        def main(argv):
            {body}
        exit_without_teardown(lambda: run_cli(main))
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", program], cwd=ROOT, capture_output=True, text=True, timeout=HANG_GUARD_S
    )
    assert result.returncode == status, result.stderr
    assert stdout in result.stdout and "teardown ran" not in result.stdout
    assert stderr in result.stderr
