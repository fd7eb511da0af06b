"""The real workflow with split.folds 2 on a small demo, up to the summary: two runs whose test
genes together are every gene once, a row each in summary.tsv and the experiment's mean and sd, and
on the console a sentence per run and one for their spread."""

import polars as pl
import pytest

from tests.workflow_helpers import snakemake, stacked_config, write_config

FOLDS_CONFIG = stacked_config("tiny", "folds")


def test_two_folds_end_to_end(tmp_path):
    config = write_config(tmp_path, "folds.yaml", FOLDS_CONFIG)
    result = snakemake(tmp_path, "results/summary/summary.tsv", "--configfile", str(config), timeout=1200)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    folds = [pl.read_parquet(tmp_path / f"results/fp_vs_tp_fold{i}/windows.parquet") for i in (1, 2)]
    tested = [set(w.filter(pl.col("split") == "test")["gene_id"]) for w in folds]
    assert not tested[0] & tested[1]
    assert tested[0] | tested[1] == set(folds[0]["gene_id"])  # every gene tested once over the folds
    summary = pl.read_csv(tmp_path / "results/summary/summary.tsv", separator="\t")
    assert summary.select("experiment", "fold", "statistic").rows() == [
        ("fp_vs_tp_fold1", 1, "run"),
        ("fp_vs_tp_fold2", 2, "run"),
        ("fp_vs_tp", None, "mean"),
        ("fp_vs_tp", None, "sd"),
    ]
    runs = summary["model_roc_auc"].to_list()[:2]
    assert summary["model_roc_auc"][2] == pytest.approx(sum(runs) / 2)
    assert summary["model_roc_auc"][3] == pytest.approx(abs(runs[0] - runs[1]) / 2**0.5)
    assert summary["n"][:2].sum() == sum(w.filter(pl.col("split") == "test").height for w in folds)
    assert not (tmp_path / "results/fp_vs_tp").exists()  # no run under the plain experiment name
    console = (result.stdout + result.stderr).splitlines()  # the answer: a line per run, then their spread
    answers = [line for line in console if line.startswith("fp_vs_tp")]
    assert [line.split(" ")[0] for line in answers] == ["fp_vs_tp_fold1", "fp_vs_tp_fold2", "fp_vs_tp:"]
    assert answers[2].startswith(
        f"fp_vs_tp: 2 runs, mean ± sd: model ROC-AUC {summary['model_roc_auc'][2]:.3f}"
    )
