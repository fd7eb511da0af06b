"""The summarize rule: one row per experiment from the metrics.json files evaluate wrote, the same
numbers as those files, empty cells for a baseline that was not scored, one line for a bad file."""

import hashlib
import json
import subprocess
import sys
from html import escape

import polars as pl
import pytest
from matplotlib import pyplot as plt
from matplotlib.text import Text

from tests.evaluation_fixtures import evaluate_untrained_models
from tests.workflow_helpers import HANG_GUARD_S, subprocess_env
from workflow_scripts.artifacts import summary_fields
from workflow_scripts.comparison_fields import BASELINES, METRICS, PREDICTORS
from workflow_scripts.evaluation.answer import answer_sentence
from workflow_scripts.evaluation.plots.figure import DPI, predictor_label
from workflow_scripts.evaluation.records import file_record
from workflow_scripts.evaluation.summary import overall_rows, summary_table, write_summary
from workflow_scripts.evaluation.summary_figure import summary_figure, without_silent

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


def test_fn_vs_decoy_tn_says_beating_the_base_score_is_true_by_construction(metrics_files, tmp_path):
    outputs = summarize(metrics_files, tmp_path)
    table = pl.read_csv(outputs["table"], separator="\t")
    assert table["matched_by_design"].to_list() == [None, "base_score,base_score_type,dinucleotide", None]
    sentences = [answer_sentence(json.loads(path.read_text())) for path in metrics_files]
    said = "by design, the decoy TN are matched to the FN scores (make_calls, calling.negatives decoy)"
    assert [said in sentence for sentence in sentences] == [False, True, False]
    assert sentences[1].endswith(
        "so beating the base model's score, the base score with the splice type and the site "
        "dinucleotide alone is true by construction."
    )
    assert escape(sentences[1]) in outputs["html"].read_text()


def test_the_same_experiment_twice_is_refused(metrics_files):
    document = json.loads(metrics_files[0].read_text())
    with pytest.raises(ValueError, match="appears twice"):
        summary_table([document, document])


def test_html_and_figure_show_every_experiment_and_predictor(metrics_files, tmp_path):
    outputs = summarize(metrics_files, tmp_path)
    html = outputs["html"].read_text()
    assert "<html" not in html and html.count("<table") == 3  # a fragment the report includes
    for name in ("fp_vs_tp", "fn_vs_tn", "no_score", "leak detector", "worse"):
        assert name in html
    answer = html.index("Does the model beat its baselines?")
    assert answer < html.index("fp_vs_tp (ROC-AUC ") < html.index("<table") < html.index("<img")
    assert "white-space:nowrap" in html and 'width="1080"' in html
    documents = [json.loads(path.read_text()) for path in metrics_files]
    rows = [row for document in documents for row in overall_rows(document)]
    assert len(rows) == len(METRICS) * (
        3 * len(PREDICTORS) - 3
    )  # no_score: no base_score(_type), no profiles
    fig = summary_figure(rows)
    labels = [tick.get_text() for tick in fig.axes[0].get_yticklabels()]
    assert labels == ["fp_vs_tp", "fn_vs_tn", "no_score"]
    assert fig.get_size_inches()[0] * DPI >= 1000  # shown at its own size in summary.html
    assert min(text.get_fontsize() for text in fig.findobj(Text) if text.get_text()) >= 9
    legend = [text.get_text() for text in fig.legends[0].get_texts()]
    silent = without_silent(rows)[1]  # e.g. the dinucleotide of windows without a site offset
    assert len(legend) == 1 + len(BASELINES) - len(silent)
    assert all(f"{predictor_label(name)}: left out" in fig.get_suptitle() for name in silent)
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
    result = subprocess.run(args, capture_output=True, text=True, env=subprocess_env(), timeout=HANG_GUARD_S)
    assert result.returncode == 2
    assert result.stderr.startswith(f"errorseq: error: {stale}: comparison: missing")
    assert len(result.stderr.strip().splitlines()) == 1
    assert not any(p.name.startswith("s.") for p in tmp_path.iterdir())
    args[args.index(str(stale))] = str(metrics_files[1])
    result = subprocess.run(args, capture_output=True, text=True, env=subprocess_env(), timeout=HANG_GUARD_S)
    assert result.returncode == 0, result.stderr
    assert pl.read_csv(tmp_path / "s.tsv", separator="\t").height == 2


def test_rule_entry_point_writes_provenance_and_tells_the_console(metrics_files, tmp_path):
    genome, calls = tmp_path / "genome.fa", tmp_path / "calls.tsv"
    genome.write_text(">chr1\nACGT\n")
    calls.write_text("chrom\tposition\n")
    record = tmp_path / "record.json"  # index_genome's, with the FASTA's facts
    record.write_text(json.dumps({"fasta": file_record(genome)}))
    args = [sys.executable, "-m", "workflow_scripts.rules.summarize", "--metrics", *map(str, metrics_files)]
    args += ["--out-table", str(tmp_path / "s.tsv"), "--out-plot", str(tmp_path / "s.png")]
    args += ["--out-html", str(tmp_path / "s.html"), "--genome-record", str(record), "--calls", str(calls)]
    args += ["--out-provenance", str(tmp_path / "provenance.json")]
    with (tmp_path / "console").open("w") as console:  # the rule's fd 3; the log is stderr
        args += ["--console-fd", str(console.fileno())]
        result = subprocess.run(
            args, capture_output=True, text=True, env=subprocess_env(), pass_fds=(console.fileno(),)
        )
    assert result.returncode == 0, result.stderr
    lines = (tmp_path / "console").read_text().splitlines()
    assert [line.split(" (ROC-AUC")[0] for line in lines] == ["fp_vs_tp", "fn_vs_tn", "no_score"]
    assert "the base model's score: not scored, " in lines[2]
    document = json.loads((tmp_path / "provenance.json").read_text())
    assert document["inputs"]["genome"]["sha256"] == hashlib.sha256(b">chr1\nACGT\n").hexdigest()
    assert document["base_model"]["files"][0]["path"] == "calls.tsv"
    html = (tmp_path / "s.html").read_text()
    assert html.index(lines[0].replace("'", "&#x27;")) < html.index("Made from") < html.index("<img")


def long_row(predictor: str, metric: str, estimate: float, low: float, high: float) -> dict:
    """One evaluation/summary.py long row; every baseline 0.1 [0.05, 0.15] below the model."""
    paired = (None, None, None, None) if predictor == "model" else (0.1, 0.05, 0.15, "better")
    row = {"experiment": "fp_vs_tp", "group": "overall", "predictor": predictor, "metric": metric}
    row |= {"estimate": estimate, "low": low, "high": high}
    return row | dict(zip(("difference", "difference_low", "difference_high", "verdict"), paired))


def test_a_baseline_constant_by_construction_is_left_out_of_the_figure_and_said_once():
    rows = [long_row(p, m, 0.5, 0.5, 0.5) for p in ("chance", "length") for m in METRICS]
    rows += [long_row(p, m, 0.8, 0.7, 0.9) for p in ("model", "kmer") for m in METRICS]
    fig = summary_figure(rows)
    legend = [text.get_text() for text in fig.legends[0].get_texts()]
    assert legend == ["error model", "k-mer logistic regression", "chance"]
    assert "window length (leak detector): left out, the same score for every window" in fig.get_suptitle()
