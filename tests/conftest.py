"""Test tiers: `make test-fast` runs what is not marked slow; `make test` runs everything.

Whole modules that start Snakemake, torchrun, DeepSpeed or a SLURM cluster are marked here; a
slow test inside an otherwise fast module carries `@pytest.mark.slow` itself.
"""

import pytest

from tests.demo_run import DemoRun, run_demo
from tests.workflow_helpers import TINY_CONFIG

SLOW_MODULES = {
    "test_bad_input",
    "test_benchmarks",
    "test_calling_workflow",
    "test_faults",
    "test_multinode",
    "test_pretrain_workflow",
    "test_readme_commands",
    "test_safety",
    "test_shard_workflow",
    "test_site_calls_workflow",
    "test_slurm",
    "test_strategies",
    "test_summary_workflow",
    "test_train",
    "test_train_workflow",
    "test_workflow",
}


def pytest_collection_modifyitems(items):
    for item in items:
        if item.module.__name__.rsplit(".", 1)[-1] in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)


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
