"""site_calls' corrected tracks: the calls of the predictor site_metrics.json recommends, as BED and
as GFF3 with annotated yes/no (sites/outputs.call_tracks), on a made-up genome whose tree tells
true donors from false ones."""

from __future__ import annotations

import json
import shutil
import subprocess

import polars as pl
import pytest
from threadpoolctl import threadpool_limits

from tests.ortholog_fixtures import SITE_CONFIG, site_input_args, species, write_inputs
from workflow_scripts.command_line import path_flags
from workflow_scripts.errors import run_cli
from workflow_scripts.rules import site_calls
from workflow_scripts.sites.gff3 import SO_TYPES

OUTPUTS = {
    "calls": "corrected_calls.parquet",
    "tree_bed": "tree_calls.bed",
    "base_bed": "base_calls.bed",
    "metrics": "site_metrics.json",
    "rescorer": "rescorer",
    "errorseq_bed": "errorseq_calls.bed",
    "corrected_bed": "corrected_calls.bed",
    "corrected_gff3": "corrected_calls.gff3",
}


def test_the_recommended_calls_are_written_as_bed_and_gff3(tmp_path):
    write_inputs(tmp_path, species("g", n_genes=40, seed=0))
    sites = tmp_path / "results/sites"
    config = {**SITE_CONFIG, "sites": {**SITE_CONFIG["sites"], "bootstrap_replicates": 40}}
    outputs = {name: sites / file for name, file in OUTPUTS.items()}
    argv = [*site_input_args(tmp_path), *path_flags({}, outputs), "--config", json.dumps(config)]
    with threadpool_limits(limits=1, user_api="openmp"):
        run_cli(site_calls.main, argv)

    predictor = json.loads(outputs["metrics"].read_text())["recommended"]["predictor"]
    assert predictor == "tree"  # the acceptor bumps tell the tree which donors are true
    table = pl.read_parquet(outputs["calls"]).filter(pl.col(f"call_{predictor}"))
    expected = {
        (chrom, position, strand, splice_type, "yes" if true else "no")
        for chrom, position, strand, splice_type, true in table.select(
            "chrom", "position", "strand", "splice_type", "is_true_site"
        ).iter_rows()
    }
    assert expected and {row[-1] for row in expected} <= {"yes", "no"}
    features = set()
    for line in outputs["corrected_gff3"].read_text().splitlines():
        if line.startswith("#"):
            continue
        chrom, _, so_type, _, _, _, strand, _, column9 = line.split("\t")
        fields = dict(pair.split("=", 1) for pair in column9.split(";"))
        assert so_type == SO_TYPES[fields["Name"]] and fields["predictor"] == predictor
        features.add((chrom, int(fields["position"]), strand, fields["Name"], fields["annotated"]))
    assert features == expected
    bed = outputs["corrected_bed"].read_text().splitlines()
    assert bed[0].startswith(f'track name="{predictor}"')
    named = {"annotated": "yes", "new": "no"}
    from_bed = set()
    for line in bed[1:]:
        chrom, start, _, name, _, strand = line.split("\t")
        splice_type, where = name.split(":")
        from_bed.add((chrom, int(start) + 1, strand, splice_type, named[where]))
    assert from_bed == expected
    if shutil.which("gt") is None:
        pytest.skip("gt (Debian genometools) is not installed: the GFF3 was not validated")
    checked = subprocess.run(
        ["gt", "gff3validator", "-typecheck", "so", str(outputs["corrected_gff3"])],
        capture_output=True,
        text=True,
    )
    assert checked.returncode == 0, checked.stderr
