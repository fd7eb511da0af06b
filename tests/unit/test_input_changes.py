"""Reruns follow the content of the user's input files, not only their mtimes (issue 23).

A file replaced by one with other content and an older mtime (cp -p, rsync -t, a restored backup)
used to leave stale outputs: "Nothing to be done". Each rule that reads a user file has a param
`inputs` with the files' content digests (workflow_scripts/input_digest.py), so such a file reruns
the rule and everything after it. The workflow cases run the real Snakemake on the A. thaliana
slice from a user scores table (test_calling_workflow.py's setup), and on the demo's genome and
calls given as the user's own files.
"""

from __future__ import annotations

import gzip
import json
import os
import time

import polars as pl
import pytest

from tests.calls_fixtures import FASTA, GTF, scores_workdir
from tests.workflow_helpers import copy_of_run, planned_rules, snakemake, write_config
from workflow_scripts.data.demo import generate_demo
from workflow_scripts.input_digest import input_digests
from workflow_scripts.io_utils import sha256_file

CALLS = "results/calls/calls.parquet"
DAY = 24 * 3600


def replace_keeping_an_older_mtime(path, content: bytes) -> None:
    """New content, and an mtime a day before the outputs made from the old one."""
    path.write_bytes(content)
    old = time.time() - DAY
    os.utime(path, (old, old))


def higher_site_scores(path) -> bytes:
    """The scores table with every planted low site score (0.2) raised to 0.97: FN become TP."""
    table = pl.read_csv(path, separator="\t")
    raised = [
        pl.when(pl.col(c) == 0.2).then(0.97).otherwise(pl.col(c)).alias(c) for c in ("donor", "acceptor")
    ]
    return table.with_columns(raised).write_csv(separator="\t").encode()


@pytest.fixture(scope="module")
def called(tmp_path_factory):
    """A workflow directory where the calls were made from the user's scores table."""
    workdir = tmp_path_factory.mktemp("calls")
    config = scores_workdir(workdir)
    result = snakemake(workdir, CALLS, "--configfile", str(config))
    assert result.returncode == 0, result.stderr[-4000:]
    return workdir, config


def test_a_scores_table_replaced_with_an_older_mtime_reruns_the_calls(called):
    workdir, config = called
    before = pl.read_parquet(workdir / CALLS)
    replace_keeping_an_older_mtime(workdir / "scores.tsv", higher_site_scores(workdir / "scores.tsv"))
    dry = snakemake(workdir, "-n", CALLS, "--configfile", str(config))
    assert planned_rules(dry.stdout) == {"make_calls"}, dry.stdout[-2000:]
    assert "params have changed since last execution" in dry.stdout.lower()
    result = snakemake(workdir, CALLS, "--configfile", str(config))
    assert result.returncode == 0, result.stderr[-4000:]
    after = pl.read_parquet(workdir / CALLS)
    assert after["pred_type"].value_counts().sort("pred_type").to_dicts() != (
        before["pred_type"].value_counts().sort("pred_type").to_dicts()
    )
    assert (after["pred_type"] == "FN").sum() < (before["pred_type"] == "FN").sum()
    again = snakemake(workdir, "-n", CALLS, "--configfile", str(config))
    assert planned_rules(again.stdout) == set(), again.stdout[-2000:]  # rerun once, then settled


@pytest.mark.parametrize(
    ("name", "first_rule"), [(GTF, "annotate_sites"), (FASTA, "index_genome")], ids=["annotation", "genome"]
)
def test_an_annotation_or_genome_replaced_with_an_older_mtime_reruns_from_its_rule(
    called, tmp_path, name, first_rule
):
    workdir, config = called
    copy = copy_of_run(workdir, tmp_path / "run")
    path = copy / name
    if name.endswith(".gz"):
        text = gzip.decompress(path.read_bytes()).replace(b"protein_coding", b"lncRNA", 1)
        content = gzip.compress(text)
    else:
        lines = path.read_bytes().splitlines(keepends=True)
        content = b"".join([lines[0], lines[1].rstrip()[::-1] + b"\n", *lines[2:]])
    replace_keeping_an_older_mtime(path, content)
    dry = snakemake(copy, "-n", CALLS, "--configfile", str(copy / config.name))
    assert first_rule in planned_rules(dry.stdout) and "make_calls" in planned_rules(dry.stdout), dry.stdout[
        -2000:
    ]


def test_a_calls_table_replaced_with_an_older_mtime_reruns_extract(tmp_path):
    generate_demo(tmp_path / "genome.fa", tmp_path / "calls.tsv", seed=1, n_genes=40, calls_per_gene=12)
    experiments = [{"name": "fp_vs_tp", "error_label": "FP", "correct_label": "TP"}]
    values = {"genome": "genome.fa", "calls": "calls.tsv", "experiments": experiments}
    config = write_config(tmp_path, "calls.yaml", values)
    target = "results/fp_vs_tp/windows.parquet"
    result = snakemake(tmp_path, target, "--configfile", str(config))
    assert result.returncode == 0, result.stderr[-4000:]
    rows = (tmp_path / "calls.tsv").read_bytes().splitlines(keepends=True)
    replace_keeping_an_older_mtime(tmp_path / "calls.tsv", b"".join(rows[:-10]))
    dry = snakemake(tmp_path, "-n", target, "--configfile", str(config))
    assert planned_rules(dry.stdout) == {"extract"}, dry.stdout[-2000:]


def test_a_digest_follows_the_content_even_at_the_same_size_and_mtime(tmp_path):
    path, cache = tmp_path / "scores.tsv", tmp_path / "cache.json"
    path.write_text("position\tdonor\n1\t0.2\n")
    first = input_digests([str(path)], cache)
    assert first == f"{path}={sha256_file(path)}"
    status = path.stat()
    path.write_text("position\tdonor\n1\t0.9\n")  # same size
    os.utime(path, ns=(status.st_atime_ns, status.st_mtime_ns))  # same mtime: only ctime moved
    assert input_digests([str(path)], cache) == f"{path}={sha256_file(path)}" != first


def test_an_unchanged_file_is_not_read_again(tmp_path):
    """The cache answers while size, mtime, ctime and inode are those it was hashed at."""
    path, cache = tmp_path / "genome.fa", tmp_path / "cache.json"
    path.write_text(">chr1\nACGT\n")
    input_digests([str(path)], cache)
    known = json.loads(cache.read_text())
    known[str(path)]["sha256"] = "from-the-cache"
    cache.write_text(json.dumps(known))
    assert input_digests([str(path)], cache) == f"{path}=from-the-cache"
    os.utime(path)  # a touch: hashed again, the same content gives the same digest
    assert input_digests([str(path)], cache) == f"{path}={sha256_file(path)}"


def test_a_damaged_cache_is_rebuilt_and_missing_files_are_left_to_snakemake(tmp_path):
    path, cache = tmp_path / "calls.tsv", tmp_path / "cache.json"
    path.write_text("chrom\tposition\n")
    cache.write_text("{not json")
    assert input_digests([str(path), str(tmp_path / "missing.tsv")], cache) == f"{path}={sha256_file(path)}"
    assert json.loads(cache.read_text())[str(path)]["sha256"] == sha256_file(path)
