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
    cpu = dict(zip(profile.column("stage"), profile.numbers("CPU s")))
    wall = dict(zip(profile.column("stage"), profile.numbers("wall s")))
    for stage in (
        "bases",
        "one-hot",
        "forward",
        "scatter",
        "writer: rows",
        "writer: parquet",
        "main thread, the rest",
    ):
        assert stage in cpu
    assert cpu["writer: parquet"] > 0 and cpu["writer: rows"] > 0 and wall["writer: parquet"] > 0
    run_wall = float(profile.title.split("run, ")[1].split(" s wall")[0])
    main_thread = [s for stage, s in wall.items() if not stage.startswith("writer:")]
    assert sum(main_thread) == pytest.approx(
        run_wall, abs=0.01 * len(main_thread)
    )  # they add up to the wall time
    run_cpu = float(profile.title.split("wall, ")[1].split(" CPU s")[0])
    assert sum(cpu.values()) == pytest.approx(run_cpu, abs=0.01 * len(cpu))  # every CPU second counted once
