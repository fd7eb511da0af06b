"""benchmarks/base_training/: OpenSpliceAI's real create-data + transfer --unfreeze-all on a few
D. melanogaster chr4 genes for one epoch (a few minutes on 2 cores), read back through the tables;
its windows against errorseq's arithmetic. The parts: tests/unit/test_bench_base_training.py."""

from __future__ import annotations

import json

import h5py
import numpy as np
import pytest

from benchmarks.catalogue import by_name, missing
from tests.spliceai_fixtures import openspliceai_models


def test_one_epoch_of_openspliceai_on_three_genes_reads_back(tmp_path, capsys):
    absent = missing(by_name("base-training"))
    if absent:
        pytest.skip(f"not installed: {absent} (benchmarks/requirements-openspliceai.txt)")
    weights = openspliceai_models("mane") / "model_10000nt_rs10.pt"
    from benchmarks.base_training import compare, heldout
    from benchmarks.base_training.layout import split_layout
    from benchmarks.tables import read_tables

    compare.main(
        ["--train-genes", "1", "--validation-genes", "1", "--test-genes", "1", "--epochs", "1"]
        + ["--weights", str(weights), "--work-dir", str(tmp_path)]
    )
    out = capsys.readouterr().out
    tables = {table.title.split(" (")[0].split(",")[0]: table for table in read_tables(out)}
    layout = tables["Genes in OpenSpliceAI's layout"]
    train_windows_seen = layout.numbers("windows in full batches")[0]
    train_labelled = layout.numbers("labelled nt")[0]

    (epoch,) = [
        json.loads(line)
        for line in (tmp_path / "openspliceai/transfer/epochs.jsonl").read_text().splitlines()
    ]
    assert epoch["windows"] == train_windows_seen  # drop_last as the layout says
    assert 0 < epoch["labelled_nt"] <= train_labelled and epoch["input_nt"] == epoch["windows"] * 15_000
    throughput = tables["Training throughput"]
    assert (
        throughput.column("side")[0].startswith("OpenSpliceAI")
        and throughput.numbers("labelled nt")[0] == epoch["labelled_nt"]
    )
    assert throughput.numbers("labelled nt per CPU-s")[0] > 0 and throughput.numbers("peak RSS MiB")[0] > 100

    held = tables["Held-out test genes"]
    assert [(row[0], row[1], row[2]) for row in held.rows] == [
        ("start weights", "0", "padded"),
        ("start weights", "0", "genomic"),
        ("OpenSpliceAI transfer --unfreeze-all", "1", "padded"),
        ("OpenSpliceAI transfer --unfreeze-all", "1", "genomic"),
    ]
    for name in ("acceptor top-k", "acceptor AUPRC", "donor top-k", "donor AUPRC"):
        assert all(0 <= value <= 1 for value in held.numbers(name))
    assert len(tables["OpenSpliceAI's own test log"].rows) == 1
    assert "not run: errorseq: train_base not available on this branch" in out

    # OpenSpliceAI's own test windows are what heldout.cut_windows makes of its genes with N around them
    data = tmp_path / "openspliceai" / "data"
    theirs = heldout.padded_windows(data / "dataset_test.h5", 10_000)
    with h5py.File(data / "datafile_test.h5") as handle:
        genes = [(s.decode(), lab.decode()) for s, lab in zip(handle["SEQ"][:], handle["LABEL"][:])]
    cuts, marks = [], []
    for sequence, label in genes:
        padded = np.frombuffer(("N" * 5_000 + sequence + "N" * 5_000).encode(), np.uint8)
        cut, mark = heldout.cut_windows(padded, np.frombuffer(label.encode(), np.uint8) - ord("0"), 10_000)
        cuts.append(heldout.one_hot(cut))
        marks.append(mark)
    assert np.array_equal(np.concatenate(cuts), theirs.onehot) and np.array_equal(
        np.concatenate(marks), theirs.labels
    )
    test_layout = split_layout([len(sequence) for sequence, _ in genes], 10_000)
    assert (
        len(theirs.labels) == test_layout.windows
        and int((theirs.labels >= 0).sum()) == test_layout.labelled_nt
    )
