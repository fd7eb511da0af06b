"""base_training/subset_eval.py: a scan read at base_data's block positions on both strands, the
share of clusters, the report's site F1 and paired differences (docs/train_base_results.md)."""

import json

import numpy as np
import polars as pl
import pytest

from workflow_scripts.base_training.dataset import BLOCK_SCHEMA
from workflow_scripts.base_training.subset_eval import main
from workflow_scripts.errors import InputError

HALF = 3
# block 0: + strand, core 10..16 (0-based half-open), cluster 0; block 1: - strand, core 20..25, cluster 1
CORES = [("+", 10, 16, 0), ("-", 20, 25, 1)]
CORE_LABELS = [[0, 2, 0, 0, 1, 0], [0, 1, 0, 2, 0]]


def base_data(folder):
    folder.mkdir()
    rows, labels, offset = [], [], 0
    for block, ((strand, start, end, cluster), core) in enumerate(zip(CORES, CORE_LABELS, strict=True)):
        length = end - start + 2 * HALF
        rows.append((block, "test", "c", strand, start, end, offset, length, [f"g{block}"], cluster))
        labels += [-1] * HALF + core + [-1] * HALF
        offset += length
    pl.DataFrame(rows, schema=BLOCK_SCHEMA, orient="row").write_parquet(folder / "blocks.parquet")
    np.save(folder / "sequence.npy", np.zeros(offset, dtype=np.int8))
    np.save(folder / "labels.npy", np.array(labels, dtype=np.int8))
    (folder / "manifest.json").write_text(json.dumps({"half_context": HALF}))
    return folder


def shards(folder, positions=range(1, 41)):
    folder.mkdir()
    table = [
        ("c:1-40:" + s, "c", s, p, p / 100 if s == "+" else 0.0, p / 1000) for s in "+-" for p in positions
    ]
    columns = ["gene_id", "chrom", "strand", "position", "donor", "acceptor"]
    pl.DataFrame(table, schema=columns, orient="row").write_parquet(folder / "1-of-1.parquet")
    return folder


def test_the_scan_is_read_at_each_core_position_in_reading_direction(tmp_path):
    data, out = base_data(tmp_path / "bd"), tmp_path / "scan.npz"
    main(["scan", "--base-data", str(data), "--shards", str(shards(tmp_path / "s")), "--out", str(out)])
    got = np.load(out)["probabilities"]
    plus = np.arange(11, 17)  # 1-based positions of core 10..16, 5' to 3'
    minus = np.arange(25, 20, -1)  # core 20..25 on -, read from its 3' genome end
    np.testing.assert_allclose(got[:, 2], np.r_[plus / 100, np.zeros(5)], rtol=1e-6)
    np.testing.assert_allclose(got[:, 1], np.r_[plus, minus] / 1000, rtol=1e-6)
    np.testing.assert_allclose(got.sum(axis=1), 1.0, rtol=1e-6)
    main(
        ["scan", "--base-data", str(data), "--shards", str(tmp_path / "s"), "--every", "2", "--out", str(out)]
    )
    assert len(np.load(out)["probabilities"]) == 6  # cluster 0 only


def test_positions_the_scan_never_scored_are_refused(tmp_path):
    data = base_data(tmp_path / "bd")
    with pytest.raises(InputError, match="3 block positions not scanned"):
        main(
            [
                "scan",
                "--base-data",
                str(data),
                "--shards",
                str(shards(tmp_path / "s", range(1, 23))),
                "--out",
                str(tmp_path / "x.npz"),
            ]
        )


def test_the_report_counts_sites_and_pairs_the_differences(tmp_path):
    data = base_data(tmp_path / "bd")
    labels = np.array(CORE_LABELS[0] + CORE_LABELS[1])
    perfect, none = np.eye(3, dtype=np.float32)[labels], np.tile([1.0, 0.0, 0.0], (11, 1)).astype(np.float32)
    np.savez(tmp_path / "perfect.npz", probabilities=perfect)
    np.savez(tmp_path / "none.npz", probabilities=none)
    np.savez(tmp_path / "half.npz", probabilities=perfect[:6])  # scored on cluster 0 only (every 2)
    out = tmp_path / "r.json"
    argv = ["report", "--base-data", str(data), "--out", str(out), "--replicates", "50"]
    main(
        [
            *argv,
            f"perfect={tmp_path}/perfect.npz:1",
            f"none={tmp_path}/none.npz:1",
            f"mean={tmp_path}/perfect.npz:1+{tmp_path}/none.npz:1",
        ]
    )
    report = json.loads(out.read_text())
    assert report["sites"] == 4 and report["units"] == 2 and report["genes"] == 2
    assert report["models"]["perfect"]["f1"] == 1.0 and report["models"]["none"]["f1"] == 0.0
    assert report["models"]["mean"]["f1"] == 1.0  # the mean of 1 and 0 is 0.5: still called
    assert report["differences"]["none - perfect"] == {"difference": -1.0, "low": -1.0, "high": -1.0}
    main([*argv, "--every", "2", f"all={tmp_path}/perfect.npz:1", f"half={tmp_path}/half.npz:2"])
    report = json.loads(out.read_text())
    assert report["sites"] == 2 and report["models"]["half"]["tp"] == 2
    with pytest.raises(InputError, match="6 rows, not the blocks of every 1"):
        main([*argv, f"wrong={tmp_path}/half.npz:1"])


def test_a_model_named_with_its_own_threshold_is_called_there(tmp_path):
    """`name@T`: that model's calls at T, the others' at --threshold, paired on the same units."""
    data = base_data(tmp_path / "bd")
    labels = np.array(CORE_LABELS[0] + CORE_LABELS[1])
    low = (np.eye(3, dtype=np.float32)[labels] * 0.3 + np.array([0.7, 0.0, 0.0])).astype(np.float32)
    np.savez(tmp_path / "low.npz", probabilities=low)  # every site scored 0.3
    out = tmp_path / "r.json"
    argv = ["report", "--base-data", str(data), "--out", str(out), "--replicates", "50"]
    main([*argv, f"at_half={tmp_path}/low.npz:1", f"at_0.25@0.25={tmp_path}/low.npz:1"])
    report = json.loads(out.read_text())
    assert report["models"]["at_half"]["f1"] == 0.0 and report["models"]["at_half"]["threshold"] == 0.5
    assert (
        report["models"]["at_0.25@0.25"]["f1"] == 1.0
        and report["models"]["at_0.25@0.25"]["threshold"] == 0.25
    )
    assert report["differences"]["at_0.25@0.25 - at_half"]["difference"] == 1.0
    with pytest.raises(InputError, match="threshold '1.5' is not a number between 0 and 1"):
        main([*argv, f"bad@1.5={tmp_path}/low.npz:1"])
