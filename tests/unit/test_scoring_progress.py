"""score_base_model's progress inside a long region (issue 49): on the CPU a line as each model of
the ensemble finishes a batch, counting the nt scored, not only when a region (a whole strand of
a BED region: one batch) is done, so the first line never reads 50% or "0 nt/s"."""

from __future__ import annotations

import io
import re

from tests.unit.test_scoring import GENES, settings
from workflow_scripts.calling.scoring import score_genes
from workflow_scripts.calling.spliceai import load_ensemble
from workflow_scripts.progress import Console

pytest_plugins = ["tests.unit.test_scoring"]  # its genome and weights fixtures
LINE = re.compile(
    r"^score_base_model shard 1 of 1: ([\d.]+)% \(([\d,]+)/([\d,]+) nt scored, ([\d,]+)/7 genes\)"
)


def test_one_batch_of_two_models_shows_its_share_before_it_ends(tmp_path, genome, weights, capsys):
    ensemble = load_ensemble(weights)  # two distinct models
    # one batch holds every gene: the old progress moved only when the batch was read back
    summary = score_genes(ensemble, genome, GENES, tmp_path / "s.parquet", settings(64, 2000), 0.0)
    lines = [line for line in capsys.readouterr().err.splitlines() if LINE.match(line)]
    first = LINE.match(lines[0])
    # after the first model's pass over the first batch: nt scored, no region finished yet
    assert 0 < float(first.group(1)) < 100 and first.group(2) != "0" and first.group(4) == "0", lines
    assert first.group(3) == f"{summary['nt']:,}"
    shares = [float(LINE.match(line).group(1)) for line in lines]
    assert shares == sorted(shares) and len(lines) > summary["regions"], lines
    assert not any(" 0 nt/s" in line for line in lines)
    assert ensemble.after_model is None  # the hook goes with the run


def test_keep_alive_writes_the_line_while_one_piece_of_work_runs(tmp_path):
    """A piece longer than the console's interval: the line comes anyway (here every 0 s)."""
    from workflow_scripts.progress import Progress

    path = tmp_path / "console.txt"
    with path.open("w") as sink:
        console = Console(sink.fileno(), every_s=0.0)
        progress = Progress("job", 100, "nt", console=console, log=io.StringIO(), shown=("nt", 50))
        progress.advance(10)
        before = path.stat().st_size
        with progress.keep_alive(poll_s=0.001):
            while path.stat().st_size == before:  # the heartbeat, not an advance, writes it
                pass
    line = path.read_text().splitlines()[-1]
    assert line.startswith("job: 10.0% (5/50 nt scored), ") and "nt/s" in line


def test_a_line_before_any_work_ends_says_so_and_no_zero_rate():
    """A keep-alive line while the first batch's first model still runs (a loaded CPU)."""
    from workflow_scripts.progress import Progress

    log, now = io.StringIO(), [100.0]
    progress = Progress(
        "score_base_model shard 1 of 1",
        1000,
        "input nt",
        tallies={"genes": 2},
        shown=("nt", 600_000),
        log=log,
        log_every_s=0,
        clock=lambda: now[0],
    )
    now[0] += 30  # half a minute into the first model's pass, nothing done
    progress.tick()
    line = log.getvalue().strip()
    assert line == "score_base_model shard 1 of 1: under way, none of the 600,000 nt finished yet [30 s]"
    assert "0 nt/s" not in line and "0/" not in line and "%" not in line
