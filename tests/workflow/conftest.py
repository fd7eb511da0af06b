"""Fixtures shared by the workflow tier."""

import pytest

from tests.demo_run import DemoRun, run_demo
from tests.workflow_helpers import TINY_CONFIG


@pytest.fixture(scope="session")
def tiny_demo_run(tmp_path_factory) -> DemoRun:
    """The whole demo pipeline with workflow_helpers.TINY_CONFIG, run once for every test that
    reads its results (test_workflow.py, test_explain.py, test_safety.py), in a folder and on
    files named like shell code, under a network guard (tests/demo_run.py). Read it, never
    change it: a test that reruns part of it works on `workflow_helpers.copy_of_run(...)`."""
    run = run_demo(tmp_path_factory.mktemp("tiny_demo"), TINY_CONFIG)
    logs = "".join(p.read_text() for p in sorted((run.workdir / "logs").rglob("*.log")))
    assert run.result.returncode == 0, run.result.stderr[-4000:] + logs[-3000:]
    return run
