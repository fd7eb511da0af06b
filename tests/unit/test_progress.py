"""workflow_scripts/progress.py: the console's progress lines, how often they come and how right
their time left is. A clock the tests move stands in for time: nothing here waits or measures."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import time

import pytest

from workflow_scripts.progress import CONSOLE_EVERY_S, Console, Progress, TimeLeft, duration


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def console_file(tmp_path, clock=time.monotonic):
    """A console that is a file, as `snakemake ... > run.log 2>&1` makes it."""
    descriptor = os.open(tmp_path / "console.txt", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    return Console(descriptor, clock=clock), tmp_path / "console.txt"


def test_the_console_gets_at_most_one_line_per_interval_and_the_last_line(tmp_path):
    clock, log = Clock(), io.StringIO()
    console, path = console_file(tmp_path, clock)
    progress = Progress("job", 600, "nt", console=console, log=log, clock=clock)
    said_at = []
    for _ in range(600):  # 600 s of work, one piece a second
        clock.now += 1
        before = path.stat().st_size
        progress.advance(1)
        if path.stat().st_size > before:
            said_at.append(clock.now)
    progress.finish()
    lines = path.read_text().splitlines()
    assert len(lines) == len(said_at) + 1 == 600 // int(CONSOLE_EVERY_S) + 1
    assert all(later - earlier >= CONSOLE_EVERY_S for earlier, later in zip(said_at, said_at[1:]))
    assert lines[-1].startswith("job done: 100.0% (600/600 nt)")
    assert log.getvalue().splitlines() == lines  # the log has the same lines at the same interval


def test_a_progress_line_says_the_share_done_the_tallies_the_rate_and_the_time_left():
    clock, log = Clock(), io.StringIO()
    progress = Progress(
        "score_base_model shard 2 of 3",
        10_000,
        "input nt",
        tallies={"genes": 10, "gene_nt": 5000},
        rate_of="gene_nt",
        log=log,
        clock=clock,
        log_every_s=0,
    )
    clock.now += 10
    progress.advance(2000)
    clock.now += 10
    progress.advance(2000, genes=4, gene_nt=2000)
    line = log.getvalue().splitlines()[-1]
    # 2,000 input nt in the 10 s since the first batch: 6,000 left take 30 s
    assert line == (
        "score_base_model shard 2 of 3: 40.0% (4/10 genes, 2,000/5,000 gene nt), 100 gene nt/s, "
        "30 s left [20 s]"
    )


def test_no_console_descriptor_or_a_closed_one_writes_nothing_and_fails_nothing(tmp_path):
    console, path = console_file(tmp_path)
    os.close(console.descriptor)
    console.say("lost")  # the console went away: silent from then on
    assert not console.is_open and path.read_text() == ""
    assert not Console(None).is_open and not Console(987).is_open


def test_the_first_console_line_names_the_log_to_follow(tmp_path):
    """As a rule runs a job: `--console-fd 3 3>&2 > {log} 2>&1`, here with the console a file."""
    (tmp_path / "logs").mkdir()
    program = (
        "from workflow_scripts.progress import Console, announce; announce(Console(3), 'job 1', 'scoring')"
    )
    shell = f'{sys.executable} -c "{program}" 3>console.txt > logs/job.log 2>&1'
    subprocess.run(["bash", "-c", shell], cwd=tmp_path, check=True)
    assert (tmp_path / "console.txt").read_text() == "job 1: scoring; the full log: tail -f logs/job.log\n"


def uneven_job(setup_s: float, nt_per_s: float, pieces: list[int]):
    """(time left estimated after each piece, truly left then): a job that spends `setup_s` in
    its first piece (loading, a GPU's first kernels), then works at a steady `nt_per_s`."""
    clock, total = Clock(), sum(pieces)
    progress = Progress("job", total, "nt", log=io.StringIO(), clock=clock, log_every_s=1e9)
    seconds = [piece / nt_per_s for piece in pieces]
    seconds[0] += setup_s
    estimates = []
    for index, (piece, spent) in enumerate(zip(pieces, seconds)):
        clock.now += spent
        progress.advance(piece)
        done = sum(pieces[: index + 1])
        estimates.append((done / total, progress.time_left.seconds(), sum(seconds[index + 1 :])))
    return estimates


def test_the_time_left_is_right_within_a_factor_of_1_5_after_5_percent_of_the_work():
    """Pieces that differ a hundredfold in size, as chunks of short and long genes do, in an
    order that puts the small ones first, and a slow first piece. Counting pieces (the old
    estimate's genes) or timing from the start (its set-up) both miss by more than 1.5x here."""
    pieces = [400] * 50 + [40_000] * 40 + [4_000] * 200
    for done, estimated, truth in uneven_job(setup_s=120, nt_per_s=1_000, pieces=pieces):
        if 0.05 <= done < 1:
            assert truth / 1.5 <= estimated <= truth * 1.5, (done, estimated, truth)


def test_time_left_before_any_work_is_unknown_and_zero_when_done():
    left = TimeLeft(100, started=0.0)
    assert left.seconds() == float("inf")
    left.record(5.0, 50)  # one piece: the rate since the start
    assert left.seconds() == pytest.approx(5.0)
    left.record(6.0, 100)
    assert left.seconds() == 0.0


@pytest.mark.parametrize(
    "seconds,text",
    [
        (0.4, "0 s"),
        (59.6, "1 min 00 s"),
        (250, "4 min 10 s"),
        (3900, "1 h 05 min"),
        (float("inf"), "unknown"),
    ],
)
def test_time_left_reads_as_hours_minutes_seconds(seconds, text):
    assert duration(seconds) == text


def test_a_jobs_stages_share_the_consoles_interval_and_the_last_line_always_shows(tmp_path):
    """Three stages of 20 s each: a line at most every 30 s, whichever stage has it (the kmer
    stage's at 32 s; the next would be due at 62 s), and the job's last line at 60 s."""
    clock = Clock()
    console, path = console_file(tmp_path, clock)
    for stage in ("trees", "kmer", "bootstrap"):
        progress = Progress(
            f"site_calls {stage}", 5, "folds", rate_of="", console=console, log=io.StringIO(), clock=clock
        )
        for _ in range(5):
            clock.now += 4
            progress.advance(1)
        progress.finish(last=stage == "bootstrap")
    lines = path.read_text().splitlines()
    assert lines == [
        "site_calls kmer: 60.0% (3/5 folds), 8 s left [12 s]",
        "site_calls bootstrap done: 100.0% (5/5 folds) in 20 s",
    ]


def test_the_time_left_benchmark_reads_score_base_models_lines_as_printed():
    """benchmarks/scoring/time_left.py compares what the lines say with the truth: it must read
    them as Progress writes them."""
    from benchmarks.scoring.time_left import rows_of

    clock, log = Clock(), io.StringIO()
    progress = Progress(
        "score_base_model shard 1 of 1",
        1000,
        "input nt",
        tallies={"genes": 4},
        shown=("nt", 400),  # as calling/scoring.py makes it
        log=log,
        clock=clock,
        log_every_s=0,
    )
    for piece in range(4):
        clock.now += 65 + (60 if piece == 0 else 0)  # 60 s of set-up in the first piece
        progress.advance(250, genes=1)
    assert rows_of(log.getvalue(), total_s=320)[1:3] == [
        ["50.0%", 190, 130, 130, "1.00", "1.46"],  # the old estimate counted the set-up
        ["75.0%", 255, 65, 65, "1.00", "1.31"],
    ]
