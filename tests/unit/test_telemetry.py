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


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_console_says_the_time_left_at_the_rate_of_the_steps_since_the_first():
    """The first step carries the set-up (120 s), the next 9 take 1 s each: 10 steps left, 10 s."""
    console, clock = io.StringIO(), Clock()
    progress = Progress(enabled=True, console=console, label="train x", clock=clock)
    progress.start(total_steps=20, epochs=2, step=0)
    clock.now = 120.0
    progress.update(1, 1, METRICS)
    clock.now = 129.0
    progress.update(10, 1, METRICS, force=True)
    progress.epoch_done(1, 10, {"val_loss": 0.4})
    clock.now = 139.0
    progress.update(20, 2, METRICS, force=True)
    progress.epoch_done(2, 20, {"val_loss": 0.3})
    lines = console.getvalue().splitlines()
    assert lines[1] == "train x: epoch 1/2, step 10/20, loss 0.5000, val_loss 0.4000, 10 s left [2:09]"
    assert lines[2] == "train x: epoch 2/2, step 20/20, loss 0.5000, val_loss 0.3000 [2:19]"  # nothing left
