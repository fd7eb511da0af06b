"""The CPU benchmarks' smallest runs, through `python -m benchmarks run NAME --quick`: their tables
read back as numbers that behave as the measured things must (no timing thresholds)."""

from __future__ import annotations

import importlib

from benchmarks.__main__ import main as run_benchmarks
from benchmarks.tables import Table, number, read_tables, shown_range
from tests.unit.test_benchmark_package import module_names


def test_every_module_of_benchmarks_and_testkit_imports():
    for name in module_names():
        importlib.import_module(name)


def quick(name: str, capsys) -> list[Table]:
    """One benchmark's smallest run through `python -m benchmarks run NAME --quick`: its tables."""
    run_benchmarks(["run", name, "--quick"])
    out = capsys.readouterr().out
    assert f"## {name}: " in out and "python -m benchmarks." in out  # dated, with its command
    return read_tables(out)


def titled(tables: list[Table], prefix: str) -> Table:
    return next(table for table in tables if table.title.startswith(prefix))


def test_padding_ranks_the_schemes_as_the_sampler_must(capsys):
    table = titled(quick("padding", capsys), "Padding efficiency")
    efficiency = dict(zip(table.column("scheme"), table.numbers("log-normal")))
    assert all(0 < value <= 1 for value in efficiency.values())
    assert (
        efficiency["pad to max"]
        < efficiency["random + dynamic padding"]
        < efficiency["HF group_by_length (mega-batch 50)"]
    )
    assert (
        efficiency["**ours**: 8 auto buckets + sorted windows"]
        > efficiency["ours: 8 auto buckets, no sorting"]
    )
    same = dict(zip(table.column("scheme"), table.numbers("same next epoch")))
    assert same["full sort (no randomness)"] == 1.0 and same["random + dynamic padding"] == 0.0
    assert set(table.numbers("steps")) >= {63.0}  # 2,000 lengths in batches of 32


def test_training_counts_the_same_tokens_whatever_the_batching(capsys):
    tables = quick("training", capsys)
    throughput = titled(tables, "Training throughput")
    assert (
        throughput.row("pad to max")[1] == throughput.row("random batches")[1] == "3"
    )  # 96 windows, batch 32
    assert throughput.numbers("× pad to max")[0] == 1.0 and min(throughput.numbers("real tokens / s")) > 0
    overhead = titled(tables, "Training-loop overhead")
    ours = throughput.row("ours: 8 auto buckets")[1]
    assert overhead.column("steps") == [ours, ours]  # the Trainer ran the bare loop's batches


def test_attention_dropout_times_both_attentions(capsys):
    table = titled(quick("attention-dropout", capsys), "Built-in transformer")
    assert table.column("width") == ["d32", "d64"] and table.column("windows × tokens") == ["8 × 16"] * 2
    # the speed-up shown is stock / ours within the rounding of the three numbers, however fast
    for stock, ours, speed_up in zip(
        table.column("nn.TransformerEncoderLayer"), table.column("errorseq's"), table.column("speed-up")
    ):
        (stock_low, stock_high), (ours_low, ours_high) = shown_range(stock), shown_range(ours)
        low, high = shown_range(speed_up)
        assert stock_low / ours_high <= high and stock_high / max(ours_low, 1e-12) >= low


def test_extraction_gathers_and_the_rule_reports_its_memory(capsys):
    tables = quick("extraction", capsys)
    gathers = titled(tables, "Extraction: 201-nt windows")
    rates = [number(cell) for cell in gathers.column("windows / s")[1:]]  # the first: pyfaidx, if installed
    assert len(rates) == 3 and min(rates) > 0
    rule = titled(tables, "extract rule")
    assert (
        rule.column("input") == ["4,000 calls (half minus strand)"] and rule.numbers("peak RSS MiB")[0] > 50
    )


def test_predict_memory_scores_every_call_in_bounded_chunks(capsys):
    table = titled(quick("predict-memory", capsys), "predict_calls")
    assert table.numbers("calls") == [4000, 8000] and table.numbers("chunk rows") == [2000, 2000]
    for row in table.rows:
        peak, anon, file = (float(row[i].replace(",", "")) for i in (5, 6, 7))
        assert 0 < anon < peak and file > 0


def test_rescore_memory_stays_under_what_the_rule_asks_for(capsys):
    table = titled(quick("rescore-memory", capsys), "rescore_sites' memory")
    assert table.numbers("M nt") == [0.2] and 1_000 < table.numbers("candidates")[0] < 3_000
    assert 0 < table.numbers("peak anon MiB")[0] < table.numbers("peak RSS MiB")[0]
    assert table.numbers("peak RSS MiB")[0] < table.numbers("mem_mb asked")[0]


def test_dryrun_plans_more_jobs_for_more_experiments(capsys):
    table = titled(quick("dryrun", capsys), "snakemake -n")
    jobs = dict(zip(table.column("workflow"), table.numbers("jobs")))
    assert jobs["one-rule Snakefile (Snakemake start-up)"] == 1
    assert jobs["errorseq, 1 experiment"] < jobs["errorseq, 10 experiments"]
