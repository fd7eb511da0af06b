"""What the schema cannot say about `split:` (which keys go with which `by`), checked where the
workflow expands its runs (config/runs.py) and again where a split is drawn (data/splits.py)."""

from __future__ import annotations

from workflow_scripts.config.types import SplitSection
from workflow_scripts.errors import InputError

HELD_OUT_CHROMOSOMES = {"test": "split.test_chromosomes", "val": "split.val_chromosomes"}


def check_split_config(split: SplitSection) -> None:
    """What the schema cannot say about `split:`: which keys go with which `by`."""
    lists = {field: getattr(split, field.split(".")[1]) for field in HELD_OUT_CHROMOSOMES.values()}
    if split.by == "gene":
        for field, names in lists.items():
            if names:
                raise InputError("config", field, "used only with split.by: chromosome")
        return
    if split.folds > 1:
        raise InputError(
            "config",
            "split.folds",
            "k-fold splits genes (split.by: gene); split.by: chromosome holds out "
            "the chromosomes named in split.test_chromosomes and split.val_chromosomes",
        )
    for field, names in lists.items():
        if not names:
            raise InputError("config", field, "split.by: chromosome needs at least one chromosome here")
    both = sorted(
        set(map(str, lists["split.test_chromosomes"])) & set(map(str, lists["split.val_chromosomes"]))
    )
    if both:
        raise InputError("config", "split.val_chromosomes", f"{both[0]!r} is also in split.test_chromosomes")
