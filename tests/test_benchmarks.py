"""Smoke test: every benchmark script runs at a tiny size and prints its table (no timing asserts)."""

from benchmarks import attention_dropout, dryrun, extraction, padding, predict_memory, training


def test_padding_and_training_benchmarks_print_tables(capsys):
    padding.main(["--n", "1500", "--no-demo"])
    training.main(["--n", "64", "--repeats", "1"])
    out = capsys.readouterr().out
    assert "| **ours**: 8 auto buckets + sorted windows |" in out
    assert "real tokens / s" in out and "errorseq Trainer" in out


def test_extraction_and_dry_run_benchmarks_print_tables(capsys, tmp_path):
    extraction.main(
        [
            "--genome-mb",
            "1",
            "--windows",
            "5000",
            "--calls",
            "2000",
            "--pyfaidx-windows",
            "200",
            "--work-dir",
            str(tmp_path),
        ]
    )
    dryrun.main(["--repeats", "1", "--experiments", "10"])
    out = capsys.readouterr().out
    assert "window_strings" in out and "peak RSS MiB" in out
    assert "errorseq, 10 experiments" in out


def test_predict_memory_benchmark_prints_its_table(capsys, tmp_path):
    predict_memory.main(["--calls", "2000", "--chunk-size", "1000", "--work-dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert "peak anon" in out.lower() and "2,000" in out


def test_attention_dropout_benchmark_times_both_attentions(capsys):
    attention_dropout.main(["--quick", "--repeats", "1"])
    out = capsys.readouterr().out
    assert "nn.TransformerEncoderLayer" in out and out.count("×") >= 4  # two rows: shape and speed-up
