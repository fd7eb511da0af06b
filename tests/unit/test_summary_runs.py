"""The summary with several runs of an experiment (split.folds, train.repeats): a row per run with
its experiment, fold and seed, then a mean and an sd row per experiment with more than one run."""

import json
import subprocess
import sys

import polars as pl
import pytest
from matplotlib import pyplot as plt

from tests.evaluation_fixtures import evaluate_untrained_models
from tests.workflow_helpers import HANG_GUARD_S, subprocess_env
from workflow_scripts.artifacts import summary_aggregated_fields, summary_fields
from workflow_scripts.config.runs import expand_runs
from workflow_scripts.config.sections import section_defaults
from workflow_scripts.evaluation.summary import overall_rows, summary_table, write_summary
from workflow_scripts.evaluation.summary_figure import summary_figure

FAST = {"evaluate": {"batch_size": 64, "bootstrap_replicates": 100, "kmer_max_k": 2}}
EXPERIMENTS = [
    {"name": "fp_vs_tp", "error_label": "FP", "correct_label": "TP"},
    {"name": "fn_vs_tn", "error_label": "FN", "correct_label": "TN"},
]
SPLIT = {"folds": 3}
TRAIN = {"seed": 4}
RUN_NAMES = ["fp_vs_tp_fold1", "fp_vs_tp_fold2", "fp_vs_tp_fold3", "fn_vs_tn_fold1", "fn_vs_tn_fold2"]


def workflow_runs():
    split = {**section_defaults("split"), **SPLIT}
    return expand_runs(EXPERIMENTS, split, {**section_defaults("train"), **TRAIN})


@pytest.fixture(scope="module")
def metrics_files(tmp_path_factory):
    """Five runs evaluated by the real evaluate rule, each on windows of its own; fn_vs_tn_fold2's
    calls carry no score (its base score is not scored)."""
    runs = [(name, 10 + index, index != 4) for index, name in enumerate(RUN_NAMES)]
    return evaluate_untrained_models(tmp_path_factory, FAST, runs, n=200)


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def documents(paths) -> list[dict]:
    return [json.loads(path.read_text()) for path in paths]


def test_a_row_per_run_then_mean_and_sd_rows_per_experiment(metrics_files):
    table = summary_table(documents(metrics_files), workflow_runs())
    assert table.columns == list(summary_fields())
    identity = table.select("experiment", "group", "fold", "seed", "statistic", "runs").rows()
    assert identity == [
        ("fp_vs_tp_fold1", "fp_vs_tp", 1, 4, "run", 1),
        ("fp_vs_tp_fold2", "fp_vs_tp", 2, 4, "run", 1),
        ("fp_vs_tp_fold3", "fp_vs_tp", 3, 4, "run", 1),
        ("fp_vs_tp", "fp_vs_tp", None, None, "mean", 3),
        ("fp_vs_tp", "fp_vs_tp", None, None, "sd", 3),
        ("fn_vs_tn_fold1", "fn_vs_tn", 1, 4, "run", 1),
        ("fn_vs_tn_fold2", "fn_vs_tn", 2, 4, "run", 1),
        ("fn_vs_tn", "fn_vs_tn", None, None, "mean", 2),
        ("fn_vs_tn", "fn_vs_tn", None, None, "sd", 2),
    ]


def test_mean_and_sd_are_over_the_runs_that_have_a_value(metrics_files):
    table = summary_table(documents(metrics_files), workflow_runs())
    runs = table.filter(pl.col("statistic") == "run")
    for group in ("fp_vs_tp", "fn_vs_tn"):
        members = runs.filter(pl.col("group") == group)
        mean = table.filter((pl.col("group") == group) & (pl.col("statistic") == "mean")).row(0, named=True)
        sd = table.filter((pl.col("group") == group) & (pl.col("statistic") == "sd")).row(0, named=True)
        for column in (
            "model_roc_auc",
            "kmer_roc_auc",
            "model_minus_kmer_roc_auc",
            "model_minus_chance_roc_auc",
        ):
            values = members[column].to_numpy()
            assert mean[column] == pytest.approx(values.mean()) and sd[column] == pytest.approx(
                values.std(ddof=1)
            )
        assert sd["model_roc_auc"] > 0  # different windows, different estimates
        for column in set(summary_fields()) - set(summary_aggregated_fields()):
            if column not in ("experiment", "group", "statistic", "runs"):
                assert mean[column] is None and sd[column] is None, column
    fn_mean = table.filter((pl.col("group") == "fn_vs_tn") & (pl.col("statistic") == "mean")).row(
        0, named=True
    )
    fn_scored = runs.filter(pl.col("experiment") == "fn_vs_tn_fold1").row(0, named=True)
    assert fn_mean["base_score_roc_auc"] == pytest.approx(
        fn_scored["base_score_roc_auc"]
    )  # one run scored it
    fn_sd = table.filter((pl.col("group") == "fn_vs_tn") & (pl.col("statistic") == "sd")).row(0, named=True)
    assert fn_sd["base_score_roc_auc"] is None  # no spread from one value


def test_single_runs_get_no_mean_rows_and_unknown_runs_are_their_own_experiment(metrics_files):
    table = summary_table(documents(metrics_files)[:1])
    assert table.select("experiment", "group", "fold", "seed", "statistic").rows() == [
        ("fp_vs_tp_fold1", "fp_vs_tp_fold1", None, None, "run")
    ]


def test_html_shows_every_run_and_the_mean_sd_table(metrics_files, tmp_path):
    outputs = [tmp_path / name for name in ("summary.tsv", "summary.png", "summary.html")]
    write_summary([str(p) for p in metrics_files], *map(str, outputs), workflow_runs())
    html = outputs[2].read_text()
    assert html.count("<table") == 4 and "Across runs: folds and seeds (mean ± sd)" in html
    for name in RUN_NAMES:
        assert name in html
    table = pl.read_csv(outputs[0], separator="\t")
    mean = table.filter((pl.col("group") == "fp_vs_tp") & (pl.col("statistic") == "mean")).row(0, named=True)
    sd = table.filter((pl.col("group") == "fp_vs_tp") & (pl.col("statistic") == "sd")).row(0, named=True)
    assert f"{mean['model_roc_auc']:.3f} ± {sd['model_roc_auc']:.3f}" in html
    assert f"{mean['model_minus_kmer_roc_auc']:+.3f} ± {sd['model_minus_kmer_roc_auc']:.3f}" in html


def test_the_figure_shows_every_run(metrics_files):
    rows = [row for document in documents(metrics_files) for row in overall_rows(document)]
    labels = [tick.get_text() for tick in summary_figure(rows).axes[0].get_yticklabels()]
    assert labels == RUN_NAMES


def test_rule_entry_point_takes_the_runs_from_the_config(metrics_files, tmp_path):
    config = json.dumps({"experiments": EXPERIMENTS, "split": SPLIT, "train": TRAIN})
    outputs = {name: tmp_path / f"s.{name}" for name in ("tsv", "png", "html")}
    args = [sys.executable, "-m", "workflow_scripts.rules.summarize", "--config", config, "--metrics"]
    args += [str(path) for path in metrics_files]
    args += [
        "--out-table",
        str(outputs["tsv"]),
        "--out-plot",
        str(outputs["png"]),
        "--out-html",
        str(outputs["html"]),
    ]
    result = subprocess.run(args, capture_output=True, text=True, env=subprocess_env(), timeout=HANG_GUARD_S)
    assert result.returncode == 0, result.stderr
    table = pl.read_csv(outputs["tsv"], separator="\t")
    assert table["statistic"].to_list() == ["run"] * 3 + ["mean", "sd"] + ["run"] * 2 + ["mean", "sd"]
    mean = table.row(3, named=True)
    sd = table.row(4, named=True)
    lines = result.stderr.strip().splitlines()
    assert lines[:3] == [line for line in lines if line.startswith("fp_vs_tp_fold")]
    expected = (
        f"fp_vs_tp: 3 runs, mean ± sd: model ROC-AUC {mean['model_roc_auc']:.3f} ± {sd['model_roc_auc']:.3f}"
    )
    assert any(line.startswith(expected) for line in lines), lines
    assert sd["n"] is None and sd["runs"] == 3
