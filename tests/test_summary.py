"""The summarize rule: one row per experiment from the metrics.json files evaluate wrote, the same
numbers as those files, empty cells for a baseline that was not scored, one line for a bad file."""

import json
import subprocess
import sys

import polars as pl
import pytest
from matplotlib import pyplot as plt

from tests.evaluation_fixtures import evaluate_untrained_models
from tests.workflow_helpers import subprocess_env
from workflow_scripts.artifacts import summary_fields
from workflow_scripts.evaluation.comparison_fields import BASELINES, METRICS, PREDICTORS
from workflow_scripts.evaluation.plots.comparison import summary_figure
from workflow_scripts.evaluation.summary import overall_rows, summary_table, write_summary

FAST = {"evaluate": {"batch_size": 64, "bootstrap_replicates": 200, "kmer_max_k": 3}}


@pytest.fixture(scope="module")
def metrics_files(tmp_path_factory):
    """Three experiments evaluated by the real evaluate rule; the last one's calls carry no score."""
    runs = [("fp_vs_tp", 0, True), ("fn_vs_tn", 1, True), ("no_score", 2, False)]
    return evaluate_untrained_models(tmp_path_factory, FAST, runs, n=240)


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def summarize(metrics_files, out_dir):
    outputs = {
        "table": out_dir / "summary.tsv",
        "plot": out_dir / "summary.png",
        "html": out_dir / "summary.html",
    }
    write_summary(
        [str(p) for p in metrics_files], str(outputs["table"]), str(outputs["plot"]), str(outputs["html"])
    )
    return outputs


def test_one_row_per_experiment_with_the_metrics_files_numbers(metrics_files, tmp_path):
    outputs = summarize(metrics_files, tmp_path)
    table = pl.read_csv(outputs["table"], separator="\t")
    assert table.columns == list(summary_fields())
    assert table["experiment"].to_list() == ["fp_vs_tp", "fn_vs_tn", "no_score"]
    for row, path in zip(table.iter_rows(named=True), metrics_files):
        metrics = json.loads(path.read_text())
        overall = metrics["comparison"]["overall"]
        assert (row["n"], row["n_positive"], row["n_genes"]) == (
            metrics["n"],
            metrics["n_positive"],
            overall["n_genes"],
        )
        assert row["threshold"] == pytest.approx(metrics["threshold"]) and row["threshold_mode"] == "auto"
        model_roc = overall["predictors"]["model"]["roc_auc"]
        assert (row["model_roc_auc"], row["model_roc_auc_low"], row["model_roc_auc_high"]) == pytest.approx(
            (model_roc["estimate"], model_roc["low"], model_roc["high"])
        )
        kmer_pr = overall["differences"]["kmer"]["pr_auc"]
        assert row["model_minus_kmer_pr_auc_low"] == pytest.approx(kmer_pr["low"])
        assert row["verdict_kmer_pr_auc"] == kmer_pr["verdict"]
        assert row["chance_roc_auc"] == 0.5


def test_a_baseline_that_was_not_scored_leaves_empty_cells(metrics_files, tmp_path):
    outputs = summarize(metrics_files, tmp_path)
    lines = outputs["table"].read_text().splitlines()
    header, no_score = lines[0].split("\t"), lines[3].split("\t")
    cells = dict(zip(header, no_score))
    assert cells["experiment"] == "no_score"
    assert all(cells[column] == "" for column in header if "base_score" in column)
    assert cells["verdict_base_score_roc_auc"] == "" and cells["kmer_roc_auc"] != ""
    scored = dict(zip(header, lines[1].split("\t")))
    assert scored["verdict_base_score_roc_auc"] in ("better", "not better", "worse")


def test_the_same_experiment_twice_is_refused(metrics_files):
    document = json.loads(metrics_files[0].read_text())
    with pytest.raises(ValueError, match="appears twice"):
        summary_table([document, document])


def test_html_and_figure_show_every_experiment_and_predictor(metrics_files, tmp_path):
    outputs = summarize(metrics_files, tmp_path)
    html = outputs["html"].read_text()
    assert "<html" not in html and html.count("<table") == 2  # a fragment the report includes
    for name in ("fp_vs_tp", "fn_vs_tn", "no_score", "leak detector", "worse"):
        assert name in html
    documents = [json.loads(path.read_text()) for path in metrics_files]
    rows = [row for document in documents for row in overall_rows(document)]
    assert len(rows) == len(METRICS) * (3 * len(PREDICTORS) - 2)  # no_score: no base_score(_type) rows
    fig = summary_figure(rows)
    labels = [tick.get_text() for tick in fig.axes[0].get_yticklabels()]
    assert labels == ["fp_vs_tp", "fn_vs_tn", "no_score"]
    legend = [text.get_text() for text in fig.legends[0].get_texts()]
    assert len(legend) == 1 + len(BASELINES)
    assert outputs["plot"].read_bytes().startswith(b"\x89PNG")


def test_rule_entry_point_and_a_bad_metrics_file_is_one_line(metrics_files, tmp_path):
    stale = tmp_path / "old_metrics.json"
    old = {k: v for k, v in json.loads(metrics_files[0].read_text()).items() if k != "comparison"}
    stale.write_text(json.dumps(old))
    args = [
        sys.executable,
        "-m",
        "workflow_scripts.rules.summarize",
        "--metrics",
        str(metrics_files[0]),
        str(stale),
        "--out-table",
        str(tmp_path / "s.tsv"),
        "--out-plot",
        str(tmp_path / "s.png"),
        "--out-html",
        str(tmp_path / "s.html"),
    ]
    result = subprocess.run(args, capture_output=True, text=True, env=subprocess_env(), timeout=120)
    assert result.returncode == 2
    assert result.stderr.startswith(f"errorseq: error: {stale}: comparison: missing")
    assert len(result.stderr.strip().splitlines()) == 1
    assert not any(p.name.startswith("s.") for p in tmp_path.iterdir())
    args[args.index(str(stale))] = str(metrics_files[1])
    result = subprocess.run(args, capture_output=True, text=True, env=subprocess_env(), timeout=120)
    assert result.returncode == 0, result.stderr
    assert pl.read_csv(tmp_path / "s.tsv", separator="\t").height == 2
