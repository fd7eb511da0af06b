import json
import subprocess
import sys

import numpy as np
import polars as pl
import pytest

from tests.train_fixtures import ROOT, subprocess_env
from tests.workflow_helpers import HANG_GUARD_S
from workflow_scripts.artifacts import BUCKET_ROW_FIELDS, BUCKET_SUMMARY_FIELDS, PADDING_EFFICIENCY_FIELDS
from workflow_scripts.bucketing.assign import assign_buckets, declared
from workflow_scripts.errors import InputError
from workflow_scripts.rules.bucket import main

# k=1: token_length = length + 1 (length 0 still has one k-mer: 2 tokens)
HAND_WINDOWS = {
    "id": ["a", "b", "c", "d", "e", "f", "g", "h"],
    "split": ["train", "train", "train", "train", "val", "test", "train", "val"],
    "label": [0, 1, 0, 1, 0, 1, 1, 0],
    "length": [2, 3, 4, 5, 6, 0, 9, 12],
}
HAND_BUCKET = {
    "boundaries": [4, 6, 10],
    "batch_sizes": [2, 2, 1],
    "max_tokens_per_batch": None,
    "max_length": 8,
}


def bucket_config(bucket=HAND_BUCKET, k=1, **sections) -> str:
    """The bucket rule's --config: bucket and tokenizer sections (model: the schema's defaults)."""
    return json.dumps({"bucket": bucket, "tokenizer": {"k": k}, **sections})


def write_windows(tmp_path, columns=None, **overrides):
    columns = dict(columns or HAND_WINDOWS) | overrides
    n = len(columns["id"])
    columns.setdefault("sequence", ["A" * (length or 0) for length in columns.get("length", [1] * n)])
    path = tmp_path / "windows.parquet"
    pl.DataFrame(columns).write_parquet(path)
    return path


def outputs(tmp_path):
    return tmp_path / "out" / "manifest.parquet", tmp_path / "out" / "summary.json"


def run_main(tmp_path, windows, config=None):
    manifest_path, summary_path = outputs(tmp_path)
    main(
        [
            "--windows",
            str(windows),
            "--config",
            config or bucket_config(),
            "--out-manifest",
            str(manifest_path),
            "--out-summary",
            str(summary_path),
        ]
    )
    return pl.read_parquet(manifest_path), json.loads(summary_path.read_text())


def test_assignment_at_boundary_values():
    token_lengths = np.array([2, 4, 5, 6, 7, 10, 11, 1000])
    assert assign_buckets(token_lengths, [4, 6, 10]).tolist() == [0, 0, 1, 1, 2, 2, 2, 2]


def test_manifest_columns_types_and_values(tmp_path):
    manifest, _ = run_main(tmp_path, write_windows(tmp_path))
    assert manifest.schema == pl.Schema(
        {
            "id": pl.String,
            "split": pl.String,
            "label": pl.Int8,
            "length": pl.Int32,
            "token_length": pl.Int32,
            "bucket": pl.Int16,
        }
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
    assert summary["boundaries_mode"] == "given" and summary["max_tokens_per_batch"] is None
    assert summary["buckets"] == [
        {
            "bucket": 0,
            "lower": 1,
            "upper": 4,
            "count": 3,
            "batch_size": 2,
            "max_batch_tokens": 8,
            "count_by_split": {"train": 2, "val": 0, "test": 1},
        },
        {
            "bucket": 1,
            "lower": 5,
            "upper": 6,
            "count": 2,
            "batch_size": 2,
            "max_batch_tokens": 12,
            "count_by_split": {"train": 2, "val": 0, "test": 0},
        },
        {
            "bucket": 2,
            "lower": 7,
            "upper": 10,
            "count": 3,
            "batch_size": 1,
            "max_batch_tokens": 8,
            "count_by_split": {"train": 1, "val": 2, "test": 0},
        },
    ]
    # train tokens after truncation to 8: a 3, b 4 | c 5, d 6 | g 8 -> 26 real tokens
    # plan batches [a b] [c d] [g] pad to 8 + 12 + 8; pad_to_max pads all 5 to 8
    efficiency = summary["padding_efficiency"]
    assert efficiency["plan"] == pytest.approx(26 / 28, abs=1e-6)
    assert efficiency["pad_to_max"] == pytest.approx(26 / 40, abs=1e-6)
    assert 26 / 40 <= efficiency["random_dynamic"] <= 1
    stderr = capsys.readouterr().err
    assert "2 window(s) exceed max_length 8" in stderr and "plan 0.929" in stderr


def test_summary_is_the_declared_contract(tmp_path):
    """The writer's fields are those workflow_scripts.artifacts declares for its readers (plots)."""
    _, summary = run_main(tmp_path, write_windows(tmp_path))
    assert tuple(summary) == BUCKET_SUMMARY_FIELDS
    assert all(tuple(row) == BUCKET_ROW_FIELDS for row in summary["buckets"])
    assert tuple(summary["padding_efficiency"]) == PADDING_EFFICIENCY_FIELDS
    with pytest.raises(ValueError, match="padding efficiency: fields \\['plan'\\] are not the declared"):
        declared({"plan": 1.0}, PADDING_EFFICIENCY_FIELDS, "padding efficiency")


def test_no_truncation_and_equal_lengths(tmp_path):
    windows = write_windows(
        tmp_path, id=["a", "b", "c"], split=["train"] * 3, label=[0, 1, 0], length=[5, 5, 5]
    )
    _, summary = run_main(tmp_path, windows)
    assert summary["n_truncated"] == 0
    assert summary["padding_efficiency"] == {
        "plan": 1.0,
        "pad_to_max": 1.0,
        "random_dynamic": 1.0,
        "group_by_length": 1.0,
    }


def test_token_lengths_use_k(tmp_path):
    config = bucket_config(
        {"boundaries": [3, 100], "batch_sizes": [4, 4], "max_tokens_per_batch": None, "max_length": 64}, k=3
    )
    manifest, summary = run_main(tmp_path, write_windows(tmp_path), config)
    # k=3: 1 + max(L - 2, 1)
    assert manifest["token_length"].to_list() == [2, 2, 3, 4, 5, 2, 8, 11]
    assert manifest["bucket"].to_list() == [0, 0, 0, 1, 1, 0, 1, 1]
    assert summary["tokenizer"] == {"kind": "nucleotide", "k": 3}


@pytest.mark.parametrize(
    "override, field",
    [
        ({"boundaries": [4, 4, 10]}, "bucket.boundaries"),
        ({"boundaries": [6, 4, 10]}, "bucket.boundaries"),
        ({"boundaries": [0, 4, 10]}, "bucket.boundaries"),
        ({"boundaries": [4, "x", 10]}, "bucket.boundaries"),
        ({"boundaries": []}, "bucket.boundaries"),
        ({"batch_sizes": [2, 2]}, "bucket.batch_sizes"),
        ({"boundaries": "auto"}, "bucket.batch_sizes"),
        ({"max_tokens_per_batch": 100}, "bucket.batch_sizes"),
        ({"n_buckets": 0}, "bucket.n_buckets"),
        ({"target_efficiency": 1.5}, "bucket.target_efficiency"),
        ({"batch_sizes": [2, 0, 1]}, "bucket.batch_sizes.1"),
        ({"max_length": 1}, "bucket.max_length"),
    ],
)
def test_bad_config_raises_input_error(tmp_path, override, field):
    with pytest.raises(InputError) as caught:
        run_main(tmp_path, write_windows(tmp_path), bucket_config({**HAND_BUCKET, **override}))
    assert (caught.value.source, caught.value.field) == ("config", field)
    assert not outputs(tmp_path)[0].exists()


@pytest.mark.parametrize(
    "sections, field",
    [
        ({"tokenizer": {"k": 0}}, "tokenizer.k"),
        ({"tokenizer": {"kind": "bpe"}}, "tokenizer.kind"),  # bpe without the learnt tokenizer directory
    ],
)
def test_bad_tokenizer_config_raises_input_error(tmp_path, sections, field):
    with pytest.raises(InputError) as caught:
        run_main(tmp_path, write_windows(tmp_path), json.dumps({"bucket": HAND_BUCKET, **sections}))
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
        sys.executable, "-m", "workflow_scripts.rules.bucket", "--windows", str(write_windows(tmp_path)),
        "--config", bucket_config({**HAND_BUCKET, "batch_sizes": [2, 2]}),
        "--out-manifest", str(manifest_path), "--out-summary", str(summary_path),
    ]  # fmt: skip
    result = subprocess.run(
        command, cwd=ROOT, env=subprocess_env(), capture_output=True, text=True, timeout=HANG_GUARD_S
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "errorseq: error: config: bucket.batch_sizes: needs one batch size per bucket (3), got 2"
    ]
    assert not manifest_path.exists() and not summary_path.exists()


def budget_config(**bucket):
    return bucket_config({"boundaries": "auto", "max_tokens_per_batch": 12, "max_length": 8, **bucket})


def test_auto_boundaries_and_token_budget(tmp_path):
    manifest, summary = run_main(tmp_path, write_windows(tmp_path), budget_config(n_buckets=2))
    # train token lengths (cut to 8): a 3, b 4, c 5, d 6, g 8; best 2 buckets: [5, 8], padding
    # 2 + 1 + 0 | 2 + 0 = 5 tokens ([4, 8]: 1 + 0 | 3 + 2 + 0 = 6; [6, 8]: 3 + 2 + 1 + 0 | 0 = 6)
    assert summary["boundaries"] == [5, 8] and summary["boundaries_mode"] == "auto"
    assert summary["batch_sizes"] == [12 // 5, 12 // 8] and summary["max_tokens_per_batch"] == 12
    assert manifest["bucket"].to_list() == [0, 0, 0, 1, 1, 0, 1, 1]
    assert summary["edge_efficiency"] == pytest.approx(26 / (5 * 3 + 8 * 2), abs=1e-6)


def test_target_efficiency_takes_fewest_buckets(tmp_path):
    _, one = run_main(tmp_path, write_windows(tmp_path), budget_config(n_buckets=5, target_efficiency=0.6))
    _, exact = run_main(tmp_path, write_windows(tmp_path), budget_config(n_buckets=5, target_efficiency=1))
    assert one["boundaries"] == [8]
    assert exact["boundaries"] == [3, 4, 5, 6, 8] and exact["edge_efficiency"] == 1.0


def test_plan_efficiency_is_the_real_sampler(tmp_path):
    rng = np.random.default_rng(0)
    n = 3000
    lengths = np.clip(np.exp(rng.normal(np.log(200), 0.6, n)), 20, 1500).astype(int)
    columns = {
        "id": [f"w{i}" for i in range(n)],
        "split": ["train"] * n,
        "label": [i % 2 for i in range(n)],
        "length": lengths.tolist(),
        "sequence": [""] * n,
    }
    _, summary = run_main(
        tmp_path,
        write_windows(tmp_path, columns),
        bucket_config(
            {"boundaries": "auto", "n_buckets": 8, "max_tokens_per_batch": 4096, "max_length": 2048}
        ),
    )
    efficiency = summary["padding_efficiency"]
    assert (
        efficiency["plan"]
        > 0.98
        > efficiency["group_by_length"]
        > efficiency["random_dynamic"]
        > efficiency["pad_to_max"]
    )
    assert len(summary["boundaries"]) == 8
    assert all(row["max_batch_tokens"] <= 4096 for row in summary["buckets"])
