"""Rank 0's progress lines: throttled within an epoch, never skipped at an epoch's end."""

import io

from workflow_scripts.training.telemetry import Progress

METRICS = {"loss": 0.5, "lr": 1e-3, "tokens_per_s": 1000.0, "rss_mb": 100.0}


def test_the_log_gets_a_bar_line_at_every_epoch_end_however_short_the_epoch(capsys):
    console = io.StringIO()
    progress = Progress(enabled=True, console=console, label="train x", min_interval_s=3600)
    progress.start(total_steps=4, epochs=2, step=0)
    progress.update(1, 1, METRICS)
    assert "epoch 1 [" not in capsys.readouterr().err  # throttled
    progress.update(2, 1, METRICS, force=True)
    bar = capsys.readouterr().err
    assert bar.startswith("epoch 1 [===============>") and " 2/4 loss 0.5000" in bar
    assert "epoch 1 [" not in console.getvalue()  # the bar stays in the log


def test_a_disabled_rank_prints_nothing(capsys):
    progress = Progress(enabled=False, console=io.StringIO())
    progress.start(total_steps=2, epochs=1, step=0)
    progress.update(2, 1, METRICS, force=True)
    assert capsys.readouterr().err == ""
