"""The path flags a rule derives from its input and output names (workflow_scripts/command_line.py)."""

from __future__ import annotations

from pathlib import Path

from workflow_scripts.command_line import path_flags


def test_inputs_then_outputs_with_hyphens_and_every_path_of_a_list():
    flags = path_flags(
        {"gene_clusters": Path("a/c.parquet"), "scores": ["s1.parquet", Path("s2.parquet")]},
        {"tree_bed": "t.bed", "calls": "calls.parquet"},
    )
    assert flags == [
        "--gene-clusters",
        "a/c.parquet",
        "--scores",
        "s1.parquet",
        "s2.parquet",
        "--out-tree-bed",
        "t.bed",
        "--out-calls",
        "calls.parquet",
    ]


def test_an_optional_input_that_is_off_adds_no_flag():
    assert path_flags({"windows": "w.parquet", "tokenizer": [], "init_encoder": None}, {}) == [
        "--windows",
        "w.parquet",
    ]
