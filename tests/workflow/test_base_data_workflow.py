"""The base_data rule in the real Snakemake workflow, on the 3-gene A. thaliana slice
(calling.start annotation): in `all` only with base_data.enabled; its folder matches the
annotation (every site labelled, every split present, no cluster in two splits); a bad setting is
one line in the job's log. Block building itself: tests/unit/test_base_data.py."""

from __future__ import annotations

import json

import polars as pl

from tests.calls_fixtures import annotation_workdir
from tests.spliceai_fixtures import openspliceai_models
from tests.workflow_helpers import merged_config, planned_rules, snakemake, stacked_config, write_config
from workflow_scripts import layout
from workflow_scripts.base_training.dataset import open_base_data
from workflow_scripts.base_training.site_f1 import THRESHOLDS


def test_base_data_runs_in_all_only_when_enabled_and_labels_every_site(tmp_path):
    config = annotation_workdir(tmp_path, shards=1)
    enabled = write_config(tmp_path, "base_data.yaml", stacked_config("base-data"))
    off = snakemake(tmp_path, "-n", "--configfile", str(config))
    assert off.returncode == 0, off.stderr[-3000:]
    assert "base_data" not in planned_rules(off.stdout)
    on = snakemake(tmp_path, "-n", "--configfile", str(config), str(enabled))
    assert on.returncode == 0, on.stderr[-3000:]
    assert "base_data" in planned_rules(on.stdout)

    run = snakemake(tmp_path, layout.BASE_DATA_MANIFEST, "--configfile", str(config), str(enabled))
    assert run.returncode == 0, run.stderr[-3000:]
    manifest = json.loads((tmp_path / layout.BASE_DATA_MANIFEST).read_text())
    sites = pl.read_parquet(tmp_path / layout.ANNOTATION_SITES)
    assert manifest["half_context"] == 200 and manifest["max_core"] == 1000
    assert (
        manifest["genome"]["name"] == "athaliana_chr1_1-14000.fa" and len(manifest["genome"]["sha256"]) == 64
    )
    assert "/" not in json.dumps(manifest).replace("/ ", "")  # no machine paths
    data = open_base_data(
        *(tmp_path / p for p in (layout.BASE_DATA_BLOCKS, layout.BASE_DATA_SEQUENCE, layout.BASE_DATA_LABELS))
    )
    labelled = int((data.labels == 1).sum() + (data.labels == 2).sum())
    assert manifest["sites"]["sites_placed"] == sites.height == labelled
    assert set(data.blocks["split"]) == {"train", "validation", "test"}
    assert data.blocks.height > 3  # the genes' spans cut into cores of at most 1,000 nt
    assert (data.blocks.group_by("cluster").agg(pl.col("split").n_unique())["split"] == 1).all()
    assert manifest["layout"]["errorseq"]["labelled_nt"] == int(
        (data.blocks["core_end"] - data.blocks["core_start"]).sum()
    )
    assert "input nt per labelled nt" in (tmp_path / "logs/base_data.log").read_text()

    again = snakemake(tmp_path, layout.BASE_DATA_MANIFEST, "--configfile", str(config), str(enabled))
    assert "Nothing to be done" in again.stdout + again.stderr

    bad = write_config(
        tmp_path, "bad.yaml", {"base_data": {"split": "chromosome", "test_chromosomes": ["chr9"]}}
    )
    failed = snakemake(
        tmp_path, layout.BASE_DATA_MANIFEST, "--configfile", str(config), str(enabled), str(bad)
    )
    assert failed.returncode != 0
    log = (tmp_path / "logs/base_data.log").read_text().strip().splitlines()
    assert log[-1] == (
        "errorseq: error: config: base_data.test_chromosomes: chromosome 'chr9' not in the genome (NC_003070.9)"
    ), log[-3:]


def test_evaluate_base_compares_openspliceais_published_models_on_the_held_out_blocks(tmp_path):
    """OpenSpliceAI's A. thaliana models (the reference) and its honeybee models on the slice's held-out
    block (context 10,000, one test block): the A. thaliana models find its sites."""
    arabidopsis, honeybee = openspliceai_models("arabidopsis"), openspliceai_models("honeybee")
    config = annotation_workdir(tmp_path, shards=1)
    settings = merged_config(
        stacked_config("base-data"),
        {
            "base_data": {"context": 10000, "max_core": 50000},
            "evaluate_base": {
                "models": [str(arabidopsis), str(honeybee)],
                "max_blocks": 1,
                "validation_blocks": 1,
                "bootstrap_replicates": 20,
            },
        },
    )
    enabled = write_config(tmp_path, "evaluate.yaml", settings)
    dry = snakemake(tmp_path, "-n", "--configfile", str(config), str(enabled))
    assert {"base_data", "evaluate_base"} <= planned_rules(dry.stdout), dry.stdout[-2000:]
    run = snakemake(tmp_path, layout.BASE_EVAL_METRICS, "--configfile", str(config), str(enabled))
    assert run.returncode == 0, run.stderr[-3000:]
    report = json.loads((tmp_path / layout.BASE_EVAL_METRICS).read_text())
    assert list(report["models"]) == ["arabidopsis", "honeybee"] and report["reference"] == "arabidopsis"
    assert report["models"]["arabidopsis"]["context"] == 10000
    assert len(report["models"]["arabidopsis"]["files"]) == 5
    for site in ("acceptor", "donor"):
        assert report["models"]["arabidopsis"][site]["sites"] >= 2
        assert report["models"]["arabidopsis"][site]["top_k"]["1.0"] >= 0.5, report["models"]["arabidopsis"]
    assert set(report["against_reference"]["honeybee"]) == {
        "acceptor_top1",
        "acceptor_auprc",
        "donor_top1",
        "donor_auprc",
        "site_f1",
        "site_f1_picked",  # at each model's threshold, picked on the validation block
    }
    assert report["models"]["arabidopsis"]["site_f1"]["f1"] >= 0.5, report["models"]["arabidopsis"]["site_f1"]
    assert {report["models"][m]["site_f1_picked"]["threshold"] for m in report["models"]} <= set(THRESHOLDS)
    assert (tmp_path / layout.BASE_EVAL_PLOT).stat().st_size > 10_000
