"""Sharded base-model scoring in the real Snakemake workflow (calling.start annotation, a tiny
random-weight SpliceAI-shaped model): one score_base_model job per shard in the DAG, gathered by
make_calls; a run killed after its first shard resumes without redoing it; the calls of three
shards equal the calls of one."""

from __future__ import annotations

import json
import os
import re
import shutil
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
    ran = re.findall(r"output: (results/base_model/shards/[^,\s]+)", resumed.stderr + resumed.stdout)
    assert sorted(ran) == [SHARD.format(n, 3) for n in range(1, 4) if n not in done_before], ran
    assert first.stat().st_mtime_ns == first_mtime  # the finished shard was kept, not redone
    log = (sharded / "logs/score_base_model/3-of-3.log").read_text()
    assert "score_base_model shard 3 of 3 done: 100.0% (1/1 genes" in log and "gene nt/s" in log, log

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


def planned_outputs(dry_run_output: str) -> set[str]:
    """Every output path `snakemake -n` lists."""
    found = re.findall(r"^\s+output: (.+)$", dry_run_output, re.MULTILINE)
    return {path.strip() for line in found for path in line.split(",")}


def test_a_deleted_shard_is_scored_again_and_one_copied_over_another_is_named(tmp_path):
    """Snakemake does not redo a deleted file that only feeds jobs whose outputs are there: a shard
    deleted after a finished run stayed missing until site_calls reran. The shards are targets of
    their own now. A shard's table copied over another's is refused by make_calls in one line
    naming the file and the regions it should hold (it advised to "score both strands")."""
    config = annotation_workdir(tmp_path, shards=3)
    calls = snakemake(tmp_path, CALLS, "--configfile", str(config))
    assert calls.returncode == 0, calls.stderr[-4000:]
    # the rest of a finished run (training and all), as placeholders Snakemake takes as up to date
    every = snakemake(tmp_path, "-n", "--forceall", "--configfile", str(config))
    for path in planned_outputs(every.stdout + every.stderr):
        placeholder = tmp_path / path
        if not placeholder.exists():
            placeholder.parent.mkdir(parents=True, exist_ok=True)
            placeholder.touch()
    touched = snakemake(tmp_path, "--touch", "--configfile", str(config))
    assert touched.returncode == 0, touched.stderr[-3000:]
    finished = snakemake(tmp_path, "-n", "--configfile", str(config))
    assert "Nothing to be done" in finished.stdout + finished.stderr, finished.stdout[-3000:]

    (tmp_path / SHARD.format(2, 3)).unlink()
    again = snakemake(tmp_path, "-n", "--configfile", str(config))
    assert again.returncode == 0, again.stderr[-3000:]
    jobs = job_counts(again.stdout)
    assert jobs.get("score_base_model") == 1 and jobs.get("make_calls") == 1, again.stdout[-3000:]
    assert f"reason: Missing output files: {SHARD.format(2, 3)}" in again.stdout

    rescored = snakemake(
        tmp_path, "--until", "make_calls", "--configfile", str(config)
    )  # not the placeholders' jobs
    assert rescored.returncode == 0 and (tmp_path / SHARD.format(2, 3)).exists(), rescored.stderr[-3000:]
    record = json.loads((tmp_path / SHARD.format(1, 3).replace(".parquet", ".regions.json")).read_text())
    chrom, strand, start, end = record["regions"][0]
    shutil.copyfile(tmp_path / SHARD.format(2, 3), tmp_path / SHARD.format(1, 3))
    refused = snakemake(tmp_path, CALLS, "--configfile", str(config))
    assert refused.returncode != 0
    errors = [line for line in (tmp_path / "logs/make_calls.log").read_text().splitlines() if "error" in line]
    assert len(errors) == 1 and errors[0].startswith(
        f"errorseq: error: {SHARD.format(1, 3)}: column 'position' row 1: "
    )
    assert f"is not in shard 1 of 3, which scores {chrom}:{start:,}-{end:,} ({strand})" in errors[0], errors
