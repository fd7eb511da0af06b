"""Fixtures shared by the workflow tier."""

import pytest
from filelock import FileLock

from tests.demo_run import DemoRun, run_demo
from tests.workflow_helpers import TINY_CONFIG


@pytest.fixture(scope="session")
def tiny_demo_run(tmp_path_factory, worker_id) -> DemoRun:
    """The whole demo pipeline with workflow_helpers.TINY_CONFIG, run once for every test that
    reads its results (test_workflow.py, test_explain.py, test_safety.py), in a folder and on
    files named like shell code, under a network guard (tests/demo_run.py). Read it, never
    change it: a test that reruns part of it works on `workflow_helpers.copy_of_run(...)`.
    Under pytest-xdist (`make test`: -n 2) the first worker to ask runs it and the others read it."""
    if worker_id == "master":
        run = run_demo(tmp_path_factory.mktemp("tiny_demo"), TINY_CONFIG)
    else:
        shared = tmp_path_factory.getbasetemp().parent
        saved = shared / "tiny_demo.json"
        with FileLock(str(shared / "tiny_demo.lock")):
            if saved.is_file():
                run = DemoRun.from_json(saved.read_text())
            else:
                (shared / "tiny_demo").mkdir()
                run = run_demo(shared / "tiny_demo", TINY_CONFIG)
                saved.write_text(run.to_json())
    logs = "".join(p.read_text() for p in sorted((run.workdir / "logs").rglob("*.log")))
    assert run.result.returncode == 0, run.result.stderr[-4000:] + logs[-3000:]
    return run
