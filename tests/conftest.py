"""Test tiers: `make test-fast` runs what is not marked slow; `make test` runs everything.

Whole modules that start Snakemake, torchrun, DeepSpeed or a SLURM cluster are marked here; a
slow test inside an otherwise fast module carries `@pytest.mark.slow` itself.
"""

import pytest

SLOW_MODULES = {
    "test_bad_input",
    "test_benchmarks",
    "test_faults",
    "test_multinode",
    "test_pretrain_workflow",
    "test_safety",
    "test_slurm",
    "test_strategies",
    "test_train",
    "test_train_workflow",
    "test_workflow",
}


def pytest_collection_modifyitems(items):
    for item in items:
        if item.module.__name__.rsplit(".", 1)[-1] in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)
