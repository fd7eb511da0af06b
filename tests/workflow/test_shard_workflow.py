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
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pytest

from tests.calls_fixtures import CALLS, SHARD, annotation_workdir
from tests.workflow_helpers import copy_of_run, snakemake, start_snakemake


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


@dataclass
class KilledAndResumed:
    """A three-shard run killed after its first shard, unlocked and resumed to the calls."""

    workdir: Path
    config: Path
    done_before: list[int]  # the shards written before the kill
    first_mtime: int  # the first of them, as the kill left it
    calls_after_kill: bool
    unlocked: subprocess.CompletedProcess
    resumed: subprocess.CompletedProcess


@pytest.fixture(scope="module")
def killed_and_resumed(tmp_path_factory) -> KilledAndResumed:
    """The run test_killed_run_resumes... checks; test_a_deleted_shard... works on a copy of its
    finished folder (the same three-shard calls it would otherwise score again)."""
    base = tmp_path_factory.mktemp("killed")
    sharded = base / "sharded"
    config = annotation_workdir(sharded, shards=3)
    workflow = start_snakemake(
        sharded, CALLS, "--configfile", str(config), output=base / "killed.out", cores=1
    )
    try:
        wait_for(lambda: next_shard_started(sharded), workflow, "second shard job")
    finally:
        os.killpg(workflow.pid, signal.SIGKILL)  # the run and its running job, as a lost node would
        workflow.wait()
    done_before = [n for n in range(1, 4) if (sharded / SHARD.format(n, 3)).exists()]
    first_mtime = sharded.joinpath(SHARD.format(done_before[0], 3)).stat().st_mtime_ns if done_before else 0
    calls_after_kill = (sharded / CALLS).exists()
    unlocked = snakemake(
        sharded, CALLS, "--configfile", str(config), "--unlock"
    )  # a hard kill leaves the lock
    resumed = snakemake(sharded, CALLS, "--configfile", str(config), cores=1)
    return KilledAndResumed(sharded, config, done_before, first_mtime, calls_after_kill, unlocked, resumed)


def test_killed_run_resumes_with_its_shards_and_gathers_the_unsharded_calls(killed_and_resumed, tmp_path):
    run = killed_and_resumed
    sharded, done_before, resumed = run.workdir, run.done_before, run.resumed
    assert done_before and not run.calls_after_kill
    first = sharded / SHARD.format(done_before[0], 3)
    first_mtime = run.first_mtime
    assert run.unlocked.returncode == 0, run.unlocked.stderr[-2000:]
    assert resumed.returncode == 0, resumed.stderr[-4000:]
    ran = re.findall(r"output: (results/base_model/shards/[^,\s]+)", resumed.stderr + resumed.stdout)
    assert sorted(ran) == [SHARD.format(n, 3) for n in range(1, 4) if n not in done_before], ran
    assert first.stat().st_mtime_ns == first_mtime  # the finished shard was kept, not redone
    log = (sharded / "logs/score_base_model/3-of-3.log").read_text()
    assert re.search(
        r"score_base_model shard 3 of 3 done: 100\.0% \(([\d,]+)/\1 nt scored, 1/1 genes\), [\d,]+ nt/s", log
    ), log

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


def test_a_deleted_shard_is_scored_again_and_one_copied_over_another_is_named(killed_and_resumed, tmp_path):
    """Snakemake does not redo a deleted file that only feeds jobs whose outputs are there: a shard
    deleted after a finished run stayed missing until site_calls reran. The shards are targets of
    their own now. A shard's table copied over another's is refused by make_calls in one line
    naming the file and the regions it should hold (it advised to "score both strands").
    It works on a copy of the three-shard run that test_killed_run_resumes... finished."""
    assert killed_and_resumed.resumed.returncode == 0, killed_and_resumed.resumed.stderr[-4000:]
    workdir = copy_of_run(killed_and_resumed.workdir, tmp_path / "run")
    config = workdir / killed_and_resumed.config.name
    # the rest of a finished run (training and all), as placeholders Snakemake takes as up to date
    every = snakemake(workdir, "-n", "--forceall", "--configfile", str(config))
    for path in planned_outputs(every.stdout + every.stderr):
        placeholder = workdir / path
        if not placeholder.exists():
            placeholder.parent.mkdir(parents=True, exist_ok=True)
            placeholder.touch()
    touched = snakemake(workdir, "--touch", "--configfile", str(config))
    assert touched.returncode == 0, touched.stderr[-3000:]
    finished = snakemake(workdir, "-n", "--configfile", str(config))
    assert "Nothing to be done" in finished.stdout + finished.stderr, finished.stdout[-3000:]

    (workdir / SHARD.format(2, 3)).unlink()
    again = snakemake(workdir, "-n", "--configfile", str(config))
    assert again.returncode == 0, again.stderr[-3000:]
    jobs = job_counts(again.stdout)
    assert jobs.get("score_base_model") == 1 and jobs.get("make_calls") == 1, again.stdout[-3000:]
    assert f"reason: Missing output files: {SHARD.format(2, 3)}" in again.stdout

    rescored = snakemake(
        workdir, "--until", "make_calls", "--configfile", str(config)
    )  # not the placeholders' jobs
    assert rescored.returncode == 0 and (workdir / SHARD.format(2, 3)).exists(), rescored.stderr[-3000:]
    record = json.loads((workdir / SHARD.format(1, 3).replace(".parquet", ".regions.json")).read_text())
    chrom, strand, start, end = record["regions"][0]
    shutil.copyfile(workdir / SHARD.format(2, 3), workdir / SHARD.format(1, 3))
    refused = snakemake(workdir, CALLS, "--configfile", str(config))
    assert refused.returncode != 0
    errors = [line for line in (workdir / "logs/make_calls.log").read_text().splitlines() if "error" in line]
    assert len(errors) == 1 and errors[0].startswith(
        f"errorseq: error: {SHARD.format(1, 3)}: column 'position' row 1: "
    )
    assert f"is not in shard 1 of 3, which scores {chrom}:{start:,}-{end:,} ({strand})" in errors[0], errors
