"""Test tiers, one folder each; the folder is the one way to say which tier a test is in.

- `tests/unit/`: no Snakemake run, no torchrun, no SLURM (`make test-fast`).
- `tests/workflow/`: starts Snakemake, torchrun or DeepSpeed on this machine, or runs something
  as heavy (the real SpliceAI models, a whole chromosome) (`make test-workflow`).
- `tests/long/`: pipeline variants run end to end that take a minute or more each (pretraining
  and Hugging Face backbones, sites.model's trainings per fold, two folds, the scores-mode chain,
  learning from the base model's score, the peers benchmark's quick run) (`make test-long`).
- `tests/cluster/`: the local SLURM cluster and the two-node SLURM cluster (slurmctld, slurmd,
  munge, network namespaces; they need root and skip without it) (`make test-cluster`).

`make test` runs unit (on both cores) and workflow; CI (`.ci/run`) runs `make lint`, `make test`,
`make test-long` and `make test-cluster`. Select a tier by its folder (`pytest tests/unit`). The
tests outside unit/ get the `slow` marker here, so `-m "not slow"` selects the unit tier too; a
test does not mark itself. Helper modules stay in tests/ (`tests.<name>`); a test module outside
the tier folders is refused, as is a test that marks itself slow.
"""

from __future__ import annotations

from pathlib import Path

import pytest

TESTS = Path(__file__).parent
TIERS = ("unit", "workflow", "long", "cluster")
SLOW_TIERS = {"workflow", "long", "cluster"}


def tier_of(item: pytest.Item) -> str:
    """The tier folder the item's module is in; a module elsewhere is a usage error."""
    parts = item.path.relative_to(TESTS).parts
    if len(parts) != 2 or parts[0] not in TIERS:
        raise pytest.UsageError(
            f"{item.path}: a test module goes in one of tests/{', '.join(TIERS)} (tests/conftest.py)"
        )
    return parts[0]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        tier = tier_of(item)
        if item.get_closest_marker("slow") is not None:
            raise pytest.UsageError(
                f"{item.nodeid}: marked slow; its folder says its tier (tests/conftest.py)"
            )
        if tier in SLOW_TIERS:
            item.add_marker(pytest.mark.slow)
