"""out_of_fold.report: pooled out-of-fold site F1, validation-picked thresholds, bootstrap."""

import numpy as np

from workflow_scripts.base_training.out_of_fold import GRID, report


def fold(units: int, best: float, seed: int) -> dict[str, np.ndarray]:
    """Counts for 2 models: model 0 always TP 5 / FP 5 / FN 5 per unit; model 1 perfect at `best`
    (TP 10) and like model 0 elsewhere."""
    base = np.zeros((2, len(GRID), units, 3), dtype=np.int64)
    base[:] = [5, 5, 5]
    at = int(np.flatnonzero(np.isclose(GRID, best))[0])
    base[1, at] = [10, 0, 0]
    return {"validation": base.copy(), "test": base.copy()}


def test_the_validation_threshold_is_picked_per_fold_and_units_pool_across_folds():
    counts = [fold(4, 0.3, 0), fold(6, 0.5, 1)]
    result = report(counts, ["start", "tuned"], threshold=0.5, replicates=50)
    assert result["units"] == 10
    assert [row["models"]["tuned"]["validation_threshold"] for row in result["folds"]] == [0.3, 0.5]
    assert result["picked"]["tuned"]["f1"] == 1.0 and result["picked"]["start"]["f1"] == 0.5
    fixed = result["fixed"]["tuned"]  # fold 0 at 0.5 is like the start, fold 1 perfect
    assert fixed["tp"] == 4 * 5 + 6 * 10 and fixed["fp"] == 4 * 5
    low, high = fixed["difference_interval"]
    assert 0 < low <= fixed["difference"] <= high
    assert result["fixed"]["start"]["difference_interval"] == [0.0, 0.0]
