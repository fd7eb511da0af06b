"""The host-feed benchmark's smallest run (`python -m benchmarks run host-feed --quick`): score_genes
whole with a zero-cost stand-in network; its tables read back as numbers that must hold whatever
the machine's speed (no timing thresholds)."""

from __future__ import annotations

import pytest

from tests.workflow.test_benchmarks import quick, titled


def test_host_feed_measures_the_host_and_says_where_the_time_goes(capsys):
    tables = quick("host-feed", capsys)
    rates = titled(tables, "Host feed: score_base_model with a zero-cost stand-in")
    assert [row[0].split(":")[0] for row in rates.rows] == [
        "measured (the device's work on the CPU)",
        "host capacity",
    ]
    gene_nt, scored_nt, input_nt = (rates.numbers(name) for name in ("gene nt", "scored nt", "input nt"))
    assert gene_nt[0] == gene_nt[1] > 0 and scored_nt[0] == scored_nt[1] and input_nt[0] == input_nt[1]
    assert input_nt[0] > scored_nt[0]  # every chunk reads its flanks
    assert min(rates.numbers("gene nt/s")) > 0 and min(rates.numbers("gene nt per CPU s")) > 0
    profile = titled(tables, "Host feed: where the time goes")
    seconds = dict(zip(profile.column("stage"), profile.numbers("seconds")))
    for stage in (
        "bases",
        "one-hot",
        "forward",
        "scatter",
        "writer: rows",
        "writer: parquet",
        "CPU: main thread",
    ):
        assert stage in seconds
    assert seconds["writer: parquet"] > 0 and seconds["writer: rows"] > 0
    wall = float(profile.title.split("run, ")[1].split(" s wall")[0])
    main_thread = [s for stage, s in seconds.items() if not stage.startswith(("writer:", "CPU:"))]
    assert sum(main_thread) == pytest.approx(
        wall, abs=0.01 * len(main_thread)
    )  # its stages add up to the wall time
