"""The real Snakemake workflow on a tiny demo: dry run, full run, rerun-only-evaluation, report."""

import hashlib
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.calls_fixtures import annotation_workdir
from tests.demo_run import WEIRD_CALLS, WEIRD_GENOME
from tests.workflow_helpers import (
    ROOT,
    TINY_CONFIG,
    copy_of_run,
    planned_rules,
    rulegraph_edges,
    snakemake,
    write_config,
)
from workflow_scripts.evaluation.answer import answer_sentence


@pytest.fixture(scope="module")
def finished_run(tiny_demo_run):
    """The demo run that test_explain.py and test_safety.py read too (conftest.py): (its
    folder, its config file)."""
    return tiny_demo_run.workdir, tiny_demo_run.config


def test_dry_run_plans_every_rule_for_each_experiment(tmp_path):
    result = snakemake(tmp_path, "-n")
    assert result.returncode == 0, result.stderr[-3000:]
    assert planned_rules(result.stdout) == {
        "all",
        "demo_data",
        "index_genome",
        "extract",
        "bucket",
        "train",
        "evaluate",
        "plot",
        "summarize",
        "explain",
    }
    assert "fp_vs_tp" in result.stdout and "fn_vs_tn" in result.stdout
    assert not (tmp_path / "results").exists()


TRAINING_EDGES = {
    ("extract", "bucket"),
    ("extract", "train"),
    ("bucket", "train"),
    ("extract", "evaluate"),
    ("bucket", "evaluate"),
    ("train", "evaluate"),
    ("bucket", "plot"),
    ("train", "plot"),
    ("evaluate", "plot"),
    ("extract", "explain"),
    ("train", "explain"),
    ("evaluate", "summarize"),
    ("evaluate", "all"),
    ("plot", "all"),
    ("explain", "all"),
    ("summarize", "all"),
}
DEMO_EDGES = TRAINING_EDGES | {
    ("demo_data", "index_genome"),
    ("demo_data", "extract"),
    ("index_genome", "extract"),
    # summarize's provenance from its declared inputs: the genome's record and the calls
    ("demo_data", "summarize"),
    ("index_genome", "summarize"),
}
# calling.start annotation: the annotation and the base model's scores make the calls and the
# site-level re-scored calls; extract reads the score profiles and the sites
ANNOTATION_EDGES = TRAINING_EDGES | {
    ("index_genome", "annotate_sites"),
    ("index_genome", "cluster_genes"),
    ("annotate_sites", "cluster_genes"),
    ("index_genome", "score_base_model"),
    ("annotate_sites", "score_base_model"),
    *(
        (rule, "make_calls")
        for rule in ("index_genome", "annotate_sites", "cluster_genes", "score_base_model")
    ),
    *((rule, "extract") for rule in ("index_genome", "annotate_sites", "score_base_model", "make_calls")),
    *(
        (rule, "site_calls")
        for rule in ("index_genome", "annotate_sites", "cluster_genes", "score_base_model")
    ),
    # summarize's provenance from its declared inputs: the genome's and annotation's records, the
    # score shards' records and the calls
    *((rule, "summarize") for rule in ("index_genome", "annotate_sites", "score_base_model", "make_calls")),
    ("site_calls", "all"),
    ("site_calls", "site_summary"),  # the report's site-calls page
    ("site_summary", "all"),
    ("score_base_model", "all"),  # the shards are targets: a deleted one is rescored
}


def test_rulegraph_is_dot_with_every_pipeline_edge(tmp_path):
    result = snakemake(tmp_path, "--rulegraph")
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.lstrip().startswith("digraph")
    assert rulegraph_edges(result.stdout) == DEMO_EDGES


def test_rulegraph_from_an_annotation_has_the_calling_chain(tmp_path):
    config = annotation_workdir(tmp_path / "run", shards=2)
    result = snakemake(tmp_path / "run", "--rulegraph", "--configfile", str(config))
    assert result.returncode == 0, result.stderr[-3000:]
    assert rulegraph_edges(result.stdout) == ANNOTATION_EDGES


def test_demo_runs_end_to_end(finished_run):
    workdir, _ = finished_run
    metrics = json.loads((workdir / "results/fp_vs_tp/evaluation/metrics.json").read_text())
    for key in ("accuracy", "precision", "recall", "f1", "mcc", "roc_auc", "pr_auc", "n", "per_bucket"):
        assert key in metrics
    assert metrics["n"] > 0 and metrics["roc_auc"] > 0.8  # the tiny demo reaches ~0.97
    for plot in (
        "roc",
        "precision_recall",
        "model_vs_baselines",
        "confusion_matrix",
        "training_curves",
        "length_histogram",
    ):
        assert (workdir / f"results/fp_vs_tp/plots/{plot}.png").stat().st_size > 5000
    for log in ("extract", "bucket", "train", "evaluate", "plot"):
        assert (workdir / f"logs/fp_vs_tp/{log}.log").exists()
    assert "world size 2" in (workdir / "logs/fp_vs_tp/train.log").read_text()


def test_the_console_carries_no_json_config(tiny_demo_run):
    """printshellcmds put each job's whole JSON config on the console (11 KB of a 28 KB console)."""
    console = tiny_demo_run.result.stdout + tiny_demo_run.result.stderr
    assert "--config '{" not in console and '"train": {' not in console
    assert "train fp_vs_tp: done" in console


def test_the_console_ends_with_the_answer_in_a_sentence(tiny_demo_run):
    console = (tiny_demo_run.result.stdout + tiny_demo_run.result.stderr).splitlines()
    metrics = json.loads((tiny_demo_run.workdir / "results/fp_vs_tp/evaluation/metrics.json").read_text())
    sentence = answer_sentence(metrics)
    assert sentence.startswith("fp_vs_tp (ROC-AUC ") and sentence in console
    assert console.index(sentence) > next(
        i for i, line in enumerate(console) if "train fp_vs_tp: done" in line
    )


def test_the_answer_survives_a_console_redirected_to_a_file(finished_run, tmp_path):
    """`snakemake ... > run.log 2>&1`: summarize writes at Snakemake's own file offset (fd 3 is a
    copy of its stderr), so neither overwrites the other."""
    workdir = copy_of_run(finished_run[0], tmp_path / "run")
    tiny = workdir / finished_run[1].name
    rerun = snakemake(
        workdir, "--forcerun", "summarize", "--configfile", str(tiny), output=tmp_path / "run.log"
    )
    assert rerun.returncode == 0, rerun.stdout[-3000:]
    metrics = json.loads((workdir / "results/fp_vs_tp/evaluation/metrics.json").read_text())
    lines, sentence = rerun.stdout.splitlines(), answer_sentence(metrics)
    assert sentence in lines, lines[-20:]
    assert any("(Rule: all)" in line for line in lines[lines.index(sentence) :]), lines[-20:]


def test_provenance_names_the_inputs_their_hashes_and_the_checkout(tiny_demo_run):
    workdir = tiny_demo_run.workdir
    document = json.loads((workdir / "results/summary/provenance.json").read_text())
    genome = document["inputs"]["genome"]
    assert genome["path"] == WEIRD_GENOME
    assert genome["sha256"] == hashlib.sha256((workdir / WEIRD_GENOME).read_bytes()).hexdigest()
    assert document["base_model"]["source"] == "calls table given"
    assert document["base_model"]["files"][0]["path"] == WEIRD_CALLS
    assert document["config"]["digest"] and document["config"]["values"]
    # the config files Snakemake merged (summarize's input config_files): by name, with sha256
    config_files = {fact["path"]: fact["sha256"] for fact in document["config"]["files"]}
    assert config_files[tiny_demo_run.config.name] == sha256_of(tiny_demo_run.config)
    assert config_files["config.yaml"] == sha256_of(ROOT / "config" / "config.yaml")
    assert not [fact for fact in document["config"]["files"] if "/" in fact["path"]]  # no machine path
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True)
    assert document["errorseq"]["commit"] == (head.stdout.strip() if head.returncode == 0 else "unknown")
    html = (workdir / "results/summary/summary.html").read_text()
    assert f"sha256 {genome['sha256'][:12]}" in html


def sha256_of(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def report_results(html: str) -> dict:
    """The report's files by path, as its page script holds them (labels, job parameters, ...)."""
    return json.loads(re.search(r"var results = (\{.*?\});\n", html, re.S).group(1))


def test_a_finished_run_has_nothing_left_to_do(finished_run):
    workdir, tiny = finished_run
    result = snakemake(workdir, "-n", "--configfile", str(tiny))
    assert result.returncode == 0
    assert "Nothing to be done" in result.stdout + result.stderr


def test_changing_an_evaluate_setting_reruns_only_evaluate_and_plot(finished_run, tmp_path):
    workdir = copy_of_run(finished_run[0], tmp_path / "run")
    tiny = workdir / finished_run[1].name
    model = workdir / "results/fp_vs_tp/model/model.pt"
    model_mtime = model.stat().st_mtime_ns
    changed = write_config(workdir, "threshold.yaml", {"evaluate": {"threshold": 0.3}})
    args = ("--configfile", str(tiny), str(changed))
    dry = snakemake(workdir, "-n", *args)
    assert planned_rules(dry.stdout) == {"evaluate", "plot", "summarize", "all"}, dry.stdout[-2000:]
    result = snakemake(workdir, *args)
    assert result.returncode == 0, result.stderr[-3000:]
    metrics = json.loads((workdir / "results/fp_vs_tp/evaluation/metrics.json").read_text())
    assert metrics["threshold"] == 0.3
    assert model.stat().st_mtime_ns == model_mtime


def test_report_opens_with_the_summary_and_captions_every_figure(finished_run, tmp_path):
    workdir, tiny = finished_run
    summary = (workdir / "results/summary/summary.tsv").read_text().splitlines()
    assert len(summary) == 1 + len(TINY_CONFIG["experiments"])  # header + a row per experiment
    report = tmp_path / "report.html"  # beside the shared run, not in it
    result = snakemake(workdir, "--configfile", str(tiny), "--report", str(report))
    assert result.returncode == 0, result.stderr[-3000:]
    html = report.read_text(errors="replace")
    for name in ("roc.png", "training_curves.png", "model_vs_baselines.png", "summary.png", "summary.tsv"):
        assert name in html
    # the front page (workflow description): the answer first, where it came from, the plot, then the text
    description = html[html.index("does the error model beat its baselines") :]
    answer = description.index("fp_vs_tp (ROC-AUC ")
    assert answer < description.index("Made from") < description.index("data:image/png;base64")
    assert description.index("The model against its baselines") < description.index("How to read this report")
    # an experiment's page lists its figures by label: model vs baselines first, explain last
    results = report_results(html)
    figures = sorted(
        (entry["labels"]["figure"], path) for path, entry in results.items() if "/fp_vs_tp/" in path
    )
    assert [Path(path).stem for _, path in figures] == [
        "model_vs_baselines",
        "roc",
        "precision_recall",
        "confusion_matrix",
        "training_curves",
        "length_histogram",
        "position_importance",
        "sequence_logo",
        "kmer_enrichment",
    ]
    summary = sorted(
        (entry["labels"]["file"], path) for path, entry in results.items() if "/summary/" in path
    )
    assert [Path(path).name for _, path in summary][:2] == ["summary.html", "summary.png"]
    roc = results["results/fp_vs_tp/plots/roc.png"]["job_properties"]["params"]
    assert "(digest of the errorseq code the rule plot runs)" in roc
    # a caption per figure (report/plots/*.rst, rendered with the wildcard)
    for caption in (
        "ROC curve of the error model",
        "against its baselines, on all test",
        "Counts of the test windows of",
        "Window lengths (tokens) of",
    ):
        assert caption in html


def test_bad_config_fails_in_seconds_with_one_line(tmp_path):
    bad = write_config(tmp_path, "bad.yaml", {"window": {"flank": -3}})
    result = snakemake(tmp_path, "-n", "--configfile", str(bad))
    assert result.returncode != 0
    errors = [
        line for line in (result.stdout + result.stderr).splitlines() if line.startswith("errorseq: error:")
    ]
    assert errors == ["errorseq: error: config: window.flank: -3 is less than the minimum of 1"]


def test_jobs_use_the_interpreter_that_runs_snakemake_not_the_first_python_on_path(tmp_path):
    """`.venv/bin/snakemake` works without an activated venv: a `python` earlier on PATH that
    cannot import errorseq is not the one the jobs run."""
    decoy_bin = tmp_path / "decoy_bin"
    decoy_bin.mkdir()
    (decoy_bin / "python").write_text("#!/bin/sh\necho 'decoy python' >&2\nexit 3\n")
    (decoy_bin / "python").chmod(0o755)
    env = {**os.environ, "PATH": f"{decoy_bin}:/usr/bin:/bin"}
    result = snakemake(tmp_path, "results/demo/calls.tsv", env=env, cores=1)
    assert result.returncode == 0, result.stderr[-2000:]
    assert (tmp_path / "results/demo/calls.tsv").stat().st_size > 0
