import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from workflow_scripts.bucket import assign_buckets, main
from workflow_scripts.errors import InputError

REPO = Path(__file__).resolve().parents[1]

# k=1: token_length = length + 1 (length 0 still has one k-mer: 2 tokens)
HAND_WINDOWS = {
    "id": ["a", "b", "c", "d", "e", "f", "g", "h"],
    "split": ["train", "train", "train", "train", "val", "test", "train", "val"],
    "label": [0, 1, 0, 1, 0, 1, 1, 0],
    "length": [2, 3, 4, 5, 6, 0, 9, 12],
}
HAND_CONFIG = ["--k", "1", "--boundaries", "4,6,10", "--batch-sizes", "2,2,1", "--max-length", "8"]


def write_windows(tmp_path, columns=None, **overrides):
    columns = dict(columns or HAND_WINDOWS) | overrides
    n = len(columns["id"])
    columns.setdefault("sequence", ["A" * (length or 0) for length in columns.get("length", [1] * n)])
    path = tmp_path / "windows.parquet"
    pl.DataFrame(columns).write_parquet(path)
    return path


def outputs(tmp_path):
    return tmp_path / "out" / "manifest.parquet", tmp_path / "out" / "summary.json"


def run_main(tmp_path, windows, config=HAND_CONFIG):
    manifest_path, summary_path = outputs(tmp_path)
    argv = ["--windows", str(windows), *config, "--out-manifest", str(manifest_path), "--out-summary", str(summary_path)]
    main(argv)
    return pl.read_parquet(manifest_path), json.loads(summary_path.read_text())


def test_assignment_at_boundary_values():
    token_lengths = np.array([2, 4, 5, 6, 7, 10, 11, 1000])
    assert assign_buckets(token_lengths, [4, 6, 10]).tolist() == [0, 0, 1, 1, 2, 2, 2, 2]


def test_manifest_columns_types_and_values(tmp_path):
    manifest, _ = run_main(tmp_path, write_windows(tmp_path))
    assert manifest.schema == pl.Schema(
        {"id": pl.String, "split": pl.String, "label": pl.Int8, "length": pl.Int32, "token_length": pl.Int32, "bucket": pl.Int16}
    )
    assert manifest["id"].to_list() == HAND_WINDOWS["id"]
    assert manifest["token_length"].to_list() == [3, 4, 5, 6, 7, 2, 10, 13]
    assert manifest["bucket"].to_list() == [0, 0, 1, 1, 2, 0, 2, 2]


def test_summary_by_hand(tmp_path, capsys):
    _, summary = run_main(tmp_path, write_windows(tmp_path))
    assert summary["tokenizer"] == {"kind": "nucleotide", "k": 1}
    assert summary["boundaries"] == [4, 6, 10] and summary["batch_sizes"] == [2, 2, 1]
    assert summary["max_length"] == 8
    assert summary["n_truncated"] == 2  # g (10 tokens) and h (13 tokens)
    assert summary["buckets"] == [
        {"bucket": 0, "lower": 1, "upper": 4, "count": 3, "batch_size": 2, "count_by_split": {"train": 2, "val": 0, "test": 1}},
        {"bucket": 1, "lower": 5, "upper": 6, "count": 2, "batch_size": 2, "count_by_split": {"train": 2, "val": 0, "test": 0}},
        {"bucket": 2, "lower": 7, "upper": 10, "count": 3, "batch_size": 1, "count_by_split": {"train": 1, "val": 2, "test": 0}},
    ]
    # train tokens after truncation to 8: a 3, b 4 | c 5, d 6 | g 8 -> 26 real tokens
    # plan batches [a b] [c d] [g] pad to 8 + 12 + 8; pad_to_max pads all 5 to 8
    efficiency = summary["padding_efficiency"]
    assert efficiency["plan"] == pytest.approx(26 / 28, abs=1e-6)
    assert efficiency["pad_to_max"] == pytest.approx(26 / 40, abs=1e-6)
    assert 26 / 40 <= efficiency["random_dynamic"] <= 1
    stderr = capsys.readouterr().err
    assert "2 window(s) exceed max_length 8" in stderr and "plan 0.929" in stderr


def test_no_truncation_and_equal_lengths(tmp_path):
    windows = write_windows(tmp_path, id=["a", "b", "c"], split=["train"] * 3, label=[0, 1, 0], length=[5, 5, 5])
    _, summary = run_main(tmp_path, windows)
    assert summary["n_truncated"] == 0
    assert summary["padding_efficiency"] == {"plan": 1.0, "pad_to_max": 1.0, "random_dynamic": 1.0}


def test_token_lengths_use_k(tmp_path):
    config = ["--k", "3", "--boundaries", "3,100", "--batch-sizes", "4,4", "--max-length", "64"]
    manifest, summary = run_main(tmp_path, write_windows(tmp_path), config)
    # k=3: 1 + max(L - 2, 1)
    assert manifest["token_length"].to_list() == [2, 2, 3, 4, 5, 2, 8, 11]
    assert manifest["bucket"].to_list() == [0, 0, 0, 1, 1, 0, 1, 1]
    assert summary["tokenizer"] == {"kind": "nucleotide", "k": 3}


@pytest.mark.parametrize(
    "config, field",
    [
        (["--boundaries", "4,4,10"], "bucket.boundaries"),
        (["--boundaries", "6,4,10"], "bucket.boundaries"),
        (["--boundaries", "0,4,10"], "bucket.boundaries"),
        (["--boundaries", "4,x,10"], "bucket.boundaries"),
        (["--boundaries", "4,,10"], "bucket.boundaries"),
        (["--batch-sizes", "2,2"], "bucket.batch_sizes"),
        (["--batch-sizes", "2,0,1"], "bucket.batch_sizes"),
        (["--k", "0"], "tokenizer.k"),
        (["--max-length", "1"], "bucket.max_length"),
    ],
)
def test_bad_config_raises_input_error(tmp_path, config, field):
    with pytest.raises(InputError) as caught:
        run_main(tmp_path, write_windows(tmp_path), HAND_CONFIG + config)
    assert (caught.value.source, caught.value.field) == ("config", field)


def test_missing_columns_name_the_file(tmp_path):
    columns = {key: value for key, value in HAND_WINDOWS.items() if key != "label"}
    windows = write_windows(tmp_path, columns)
    with pytest.raises(InputError, match="label") as caught:
        run_main(tmp_path, windows)
    assert caught.value.source == str(windows)


def test_empty_train_split(tmp_path):
    windows = write_windows(tmp_path, id=["a", "b"], split=["val", "test"], label=[0, 1], length=[3, 4])
    with pytest.raises(InputError) as caught:
        run_main(tmp_path, windows)
    assert (caught.value.source, caught.value.field) == (str(windows), "split")


@pytest.mark.parametrize(
    "override, field",
    [({"split": ["train"] * 7 + ["dev"]}, "split"), ({"length": [2, 3, 4, 5, 6, 0, 9, None]}, "length")],
)
def test_bad_window_values(tmp_path, override, field):
    windows = write_windows(tmp_path, **override)
    with pytest.raises(InputError) as caught:
        run_main(tmp_path, windows)
    assert caught.value.field == field


def test_cli_bad_config_exits_2_with_one_line_and_no_outputs(tmp_path):
    manifest_path, summary_path = outputs(tmp_path)
    command = [
        sys.executable, "-m", "workflow_scripts.bucket", "--windows", str(write_windows(tmp_path)),
        *HAND_CONFIG[:-4], "--batch-sizes", "2,2", "--max-length", "8",
        "--out-manifest", str(manifest_path), "--out-summary", str(summary_path),
    ]  # fmt: skip
    env = os.environ | {"PYTHONPATH": str(REPO)}
    result = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "errorseq: error: config: bucket.batch_sizes: needs one batch size per boundary (3), got 2"
    ]
    assert not manifest_path.exists() and not summary_path.exists()
