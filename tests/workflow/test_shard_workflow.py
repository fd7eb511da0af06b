"""Sharded base-model scoring in the real Snakemake workflow (calling.start annotation, a tiny
random-weight SpliceAI-shaped model): one score_base_model job per shard in the DAG, gathered by
make_calls; a run killed after its first shard resumes without redoing it; the calls of three
shards equal the calls of one."""

from __future__ import annotations

import os
import re
import signal
import time
from pathlib import Path

import polars as pl

from tests.calls_fixtures import CALLS, SHARD, annotation_workdir
from tests.workflow_helpers import snakemake, start_snakemake


def job_counts(output: str) -> dict[str, int]:
    """Rule -> jobs, from Snakemake's job-stats table."""
    return {rule: int(count) for rule, count in re.findall(r"^(\w+)\s+(\d+)\s*$", output, re.MULTILINE)}


def test_each_shard_is_a_job_gathered_by_make_calls(tmp_path):
    config = annotation_workdir(tmp_path, shards=4)
    dry = snakemake(tmp_path, "-n", CALLS, "--configfile", str(config))
    assert dry.returncode == 0, dry.stderr[-3000:]
    assert job_counts(dry.stdout)["score_base_model"] == 4, dry.stdout[-3000:]
    for shard in range(1, 5):
        assert SHARD.format(shard, 4) in dry.stdout
    dag = snakemake(tmp_path, CALLS, "--configfile", str(config), "--dag")
    labels = dict(re.findall(r'^\s*(\d+)\[label = "(\w+)', dag.stdout, re.MULTILINE))
    edges = re.findall(r"^\s*(\d+) -> (\d+)", dag.stdout, re.MULTILINE)
    into_calls = [labels[a] for a, b in edges if labels[b] == "make_calls"]
    assert into_calls.count("score_base_model") == 4, dag.stdout


def wait_for(condition, workflow, what: str, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert workflow.poll() is None, f"Snakemake ended (exit {workflow.returncode}) before {what}"
        assert time.monotonic() < deadline, f"no {what} after {timeout} s"
        time.sleep(0.1)


def next_shard_started(workdir: Path) -> bool:
    """With one core, a second shard's log means the first shard's job ended and was recorded."""
    return len(list((workdir / "logs/score_base_model").glob("*.log"))) >= 2


def test_killed_run_resumes_with_its_shards_and_gathers_the_unsharded_calls(tmp_path):
    sharded = tmp_path / "sharded"
    config = annotation_workdir(sharded, shards=3)
    workflow = start_snakemake(
        sharded, CALLS, "--configfile", str(config), output=tmp_path / "killed.out", cores=1
    )
    try:
        wait_for(lambda: next_shard_started(sharded), workflow, "second shard job")
    finally:
        os.killpg(workflow.pid, signal.SIGKILL)  # the run and its running job, as a lost node would
        workflow.wait()
    done_before = [n for n in range(1, 4) if (sharded / SHARD.format(n, 3)).exists()]
    assert done_before and not (sharded / CALLS).exists()
    first = sharded / SHARD.format(done_before[0], 3)
    first_mtime = first.stat().st_mtime_ns
    unlocked = snakemake(
        sharded, CALLS, "--configfile", str(config), "--unlock"
    )  # a hard kill leaves the lock
    assert unlocked.returncode == 0, unlocked.stderr[-2000:]
    resumed = snakemake(sharded, CALLS, "--configfile", str(config), cores=1)
    assert resumed.returncode == 0, resumed.stderr[-4000:]
    ran = re.findall(r"output: (results/base_model/shards/\S+)", resumed.stderr + resumed.stdout)
    assert sorted(ran) == [SHARD.format(n, 3) for n in range(1, 4) if n not in done_before], ran
    assert first.stat().st_mtime_ns == first_mtime  # the finished shard was kept, not redone
    log = (sharded / "logs/score_base_model/3-of-3.log").read_text()
    assert "score_base_model shard 3 of 3 done: 1/1 genes" in log and "time left" in log, log

    whole = tmp_path / "whole"
    whole_config = annotation_workdir(whole, shards=1)
    result = snakemake(whole, CALLS, "--configfile", str(whole_config))
    assert result.returncode == 0, result.stderr[-4000:]
    one, three = (pl.read_parquet(folder / CALLS) for folder in (whole, sharded))
    scores = ["score", "window_score"]  # a chunk's batch-mates move float32 rounding by an ulp
    assert one.height > 0 and three.drop(scores).equals(one.drop(scores))
    for column in scores:
        assert (three[column] - one[column]).abs().max() < 1e-6
    shards = [pl.read_parquet(sharded / SHARD.format(n, 3)) for n in range(1, 4)]
    assert [part["gene_id"].n_unique() for part in shards] == [1, 1, 1]  # three regions, one each
