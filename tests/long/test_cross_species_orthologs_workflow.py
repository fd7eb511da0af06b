"""benchmarks/cross_species_orthologs.py on a work directory the real workflow made (Snakemake,
site_calls on the A. thaliana slice of test_site_calls_workflow.py, a calling.start scores run):
the folder's layout is what the command reads, and the slice transferred onto itself, held out,
gives back site_calls' own out-of-fold calls."""

from __future__ import annotations

import json

import numpy as np

from benchmarks import cross_species_orthologs
from benchmarks.site_transfer.ortholog_transfer import transfer_calls
from benchmarks.site_transfer.orthologs import exonic_kmer_pairs
from benchmarks.site_transfer.run_folder import read_site_run
from tests.calls_fixtures import scores_workdir
from tests.workflow_helpers import snakemake, stacked_config, write_config


def test_a_workflow_run_held_out_against_itself_gives_back_its_out_of_fold_calls(tmp_path):
    config = scores_workdir(tmp_path)
    sites = write_config(tmp_path, "sites.yaml", stacked_config("sites"))
    result = snakemake(tmp_path, "results/sites/site_metrics.json", "--configfile", str(config), str(sites))
    assert result.returncode == 0, result.stderr[-4000:]
    scores = [str(tmp_path / "scores.tsv")]
    run = read_site_run(tmp_path, scores)
    pairs = exonic_kmer_pairs(run.exons, run.inputs.genome, run.exons, run.inputs.genome)
    moved = transfer_calls(run, run, pairs, 0.02)
    assert len(moved.excluded) == run.metrics["counts"]["gene_clusters"] == 3
    for held_out, own in (("held_out_tree", "call_tree"), ("held_out_base_tuned", "call_base_tuned")):
        assert np.array_equal(moved.calls[held_out], run.calls[own].to_numpy()), held_out
    out = tmp_path / "orthologs.json"
    argv = [str(tmp_path), str(tmp_path), "--source-scores", *scores, "--target-scores", *scores]
    cross_species_orthologs.main([*argv, "--replicates", "100", "--out", str(out)])
    report = json.loads(out.read_text())
    assert report["orthologs"]["genes_by_ortholog_folds"] == {"1": 3}
    assert report["checks"]["source_out_of_fold_tree_max_abs_difference"] < 1e-6
