"""benchmarks/peers/: the whole quick run, errorseq and the transformers Trainer on the same BERT
and windows, and their scorers agree. The parts: tests/unit/test_bench_peers.py."""

from __future__ import annotations

from pathlib import Path

import pytest


def test_quick_run_matches_the_peers_steps_and_the_scorers_agree(tmp_path, capsys):
    pytest.importorskip("accelerate")
    from benchmarks.peers import compare
    from benchmarks.tables import read_tables

    compare.main(["--quick", "--work-dir", str(tmp_path)])
    out = capsys.readouterr().out
    tables = {table.title.split(" (")[0].split(":")[0]: table for table in read_tables(out)}
    matched = tables["What was matched"]
    for data in ("demo", "long_tail"):
        rows = [row for row in matched.rows if row[0] == data]
        assert [row[1] for row in rows] == ["errorseq", "Trainer, group_by_length", "MetaSpliceAI recipe"]
        assert len({row[3] for row in rows}) == 1  # every peer took errorseq's optimizer steps
    assert all(0.5 < epochs < 1.5 for epochs in matched.numbers("epochs"))
    ratios = tables["Peers"]
    errorseq = [row for row in ratios.rows if row[1] == "**errorseq**"]
    assert len(errorseq) == 2 and all("(1.00×)" in row[4] for row in errorseq)  # the baseline of its ratios
    agreements = out.split("each tool's own (evaluate rule / trainer.predict): ")[1].splitlines()[0]
    for pair in agreements.split("; "):
        shared, own = pair.split(": ")[1].split(" vs own ")
        assert abs(float(shared) - float(own)) < 1e-3, pair
    assert Path(tmp_path / "quick" / "runs" / "demo" / "errorseq" / "model.pt").exists()
