"""compare_runs: two site_calls runs over the same scan, paired by genomic block. On one table its
difference and interval are exactly site_calls' own whole-region ones (whole_region_report on the
same items); runs of a different annotation, a predictor a run lacks, or a table that is not its
run's site_metrics.json stop with one line naming the file and field."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

from workflow_scripts.errors import InputError
from workflow_scripts.sites.compare_runs import Run, compare, main
from workflow_scripts.sites.items import BLOCK_NT, Items
from workflow_scripts.sites.predictors import BASE_THRESHOLD, BASE_TUNED
from workflow_scripts.sites.whole_region import whole_region_report

REPLICATES = 300


def scan_table(seed: int = 0, rows: int = 1200) -> pl.DataFrame:
    """Rows of a whole-region scan on two chromosomes, 7 blocks: a third annotated sites, two
    predictors' calls with different precision and recall."""
    rng = np.random.default_rng(seed)
    chrom = np.where(rng.random(rows) < 0.7, "chrA", "chrB")
    position = np.where(
        chrom == "chrA", rng.integers(0, 4 * BLOCK_NT, rows), rng.integers(0, 3 * BLOCK_NT, rows)
    )
    true = rng.random(rows) < 0.35
    candidate = ~true | (rng.random(rows) < 0.9)  # a tenth of the sites have no candidate
    first = candidate & (rng.random(rows) < np.where(true, 0.9, 0.3))
    second = candidate & (rng.random(rows) < np.where(true, 0.8, 0.1))
    return pl.DataFrame(
        {
            "chrom": chrom,
            "position": position + 1,
            "strand": rng.choice(["+", "-"], rows),
            "splice_type": rng.choice(["donor", "acceptor"], rows),
            "is_candidate": candidate,
            "is_true_site": true,
            f"call_{BASE_THRESHOLD}": first,
            f"call_{BASE_TUNED}": second,
        }
    ).sort("chrom", "position")


def items_of(table: pl.DataFrame) -> Items:
    """site_calls' items of the table: one per row (a missed site has no candidate)."""
    blocks = (
        (table["chrom"] + ":" + (table["position"] // BLOCK_NT).cast(pl.String)).to_numpy().astype(object)
    )
    candidate = table["is_candidate"].to_numpy()
    return Items(
        members=np.where(candidate, np.arange(table.height), -1)[:, None],
        is_site=table["is_true_site"].to_numpy(),
        splice_type=table["splice_type"].to_numpy(),
        fold=np.ones(table.height, int),
        cluster=blocks,
        location=np.full(table.height, "gene", dtype=object),
        block=blocks,
    )


def site_calls_folder(folder, table: pl.DataFrame, calls: dict[str, str] | None = None):
    """A run's directory: its results/sites with the table, and site_metrics.json's whole_region as site_calls writes it."""
    calls = calls or {BASE_THRESHOLD: f"call_{BASE_THRESHOLD}", BASE_TUNED: f"call_{BASE_TUNED}"}
    sites = folder / "results/sites"
    sites.mkdir(parents=True)
    table.write_parquet(sites / "corrected_calls.parquet")
    candidate_calls = {name: table[column].to_numpy() for name, column in calls.items()}
    report = whole_region_report(items_of(table), candidate_calls, REPLICATES, 0, "regions")
    (sites / "site_metrics.json").write_text(json.dumps({"whole_region": report}))
    return report


def test_one_run_two_predictors_gives_site_calls_own_difference_and_interval(tmp_path):
    report = site_calls_folder(tmp_path / "run", scan_table())
    result = compare(
        [Run(tmp_path / "run", BASE_THRESHOLD), Run(tmp_path / "run", BASE_TUNED)], REPLICATES, 0
    )
    expected = report["differences"][f"{BASE_TUNED} - {BASE_THRESHOLD}"]
    assert expected["overall"]["f1"]["low"] is not None  # 7 blocks: a real interval
    for group in ("overall", "donor", "acceptor"):
        assert result["difference"][group] == expected[group]
    assert result["bootstrap"]["blocks"] == report["bootstrap"]["blocks"] == 7
    f1 = result["runs"][f"{tmp_path / 'run'}:{BASE_TUNED}"]["f1"]
    assert f1["estimate"] == pytest.approx(report["calls"][BASE_TUNED]["overall"]["f1"])
    assert f1["low"] < f1["estimate"] < f1["high"]


def test_two_runs_are_paired_on_the_same_blocks(tmp_path, capsys):
    table = scan_table()
    one = site_calls_folder(tmp_path / "start", table)
    swapped = table.with_columns(pl.col(f"call_{BASE_TUNED}").alias(f"call_{BASE_THRESHOLD}"))
    site_calls_folder(tmp_path / "tuned", swapped)
    main(
        [
            f"{tmp_path / 'start'}:{BASE_THRESHOLD}",
            f"{tmp_path / 'tuned'}:{BASE_THRESHOLD}",
            "--replicates",
            str(REPLICATES),
            "--out",
            str(tmp_path / "out.json"),
        ]
    )
    written = json.loads((tmp_path / "out.json").read_text())
    assert (
        written["difference"]["overall"] == one["differences"][f"{BASE_TUNED} - {BASE_THRESHOLD}"]["overall"]
    )
    printed = capsys.readouterr().out
    assert "difference " in printed and "over 7 blocks" in printed
    itself = compare([Run(tmp_path / "start", BASE_TUNED), Run(tmp_path / "tuned", BASE_THRESHOLD)], 50, 0)
    assert itself["difference"]["overall"]["f1"] | {"verdict": None} == {
        "estimate": 0.0,
        "low": 0.0,
        "high": 0.0,
        "reason": None,
        "verdict": None,
    }


def test_runs_of_another_annotation_are_refused(tmp_path):
    table = scan_table()
    site_calls_folder(tmp_path / "a", table)
    site_calls_folder(
        tmp_path / "b", table.filter(pl.col("is_candidate") | (pl.int_range(pl.len()) % 2 == 0))
    )
    with pytest.raises(
        InputError, match=r"b/results/sites/corrected_calls.parquet: is_true_site: .* not the same regions"
    ):
        compare([Run(tmp_path / "a", BASE_THRESHOLD), Run(tmp_path / "b", BASE_THRESHOLD)], 50, 0)


def test_a_missing_predictor_and_a_table_of_another_run_are_named(tmp_path):
    site_calls_folder(tmp_path / "a", scan_table())
    with pytest.raises(
        InputError,
        match=r"a/results/sites/corrected_calls.parquet: call_tree: no predictor 'tree'.*base_threshold",
    ):
        compare([Run(tmp_path / "a", "tree"), Run(tmp_path / "a", BASE_THRESHOLD)], 50, 0)
    site_calls_folder(tmp_path / "b", scan_table())
    scan_table(seed=1).write_parquet(tmp_path / "b/results/sites/corrected_calls.parquet")
    with pytest.raises(
        InputError, match=r"b/results/sites/corrected_calls.parquet: call_base_threshold: TP/FP/FN .* says"
    ):
        compare([Run(tmp_path / "a", BASE_THRESHOLD), Run(tmp_path / "b", BASE_THRESHOLD)], 50, 0)


def test_a_run_without_a_predictor_or_without_site_calls_outputs_is_one_line(tmp_path, capsys):
    with pytest.raises(InputError, match="RUN:PREDICTOR"):
        main([str(tmp_path), f"{tmp_path}:{BASE_THRESHOLD}"])
    site_calls_folder(tmp_path / "a", scan_table())
    with pytest.raises(
        InputError, match=r"unfinished/results/sites/corrected_calls.parquet: file: not found"
    ):
        compare([Run(tmp_path / "a", BASE_THRESHOLD), Run(tmp_path / "unfinished", BASE_THRESHOLD)], 50, 0)
    (tmp_path / "a/results/sites/site_metrics.json").unlink()
    with pytest.raises(InputError, match=r"a/results/sites/site_metrics.json: file: not found"):
        compare([Run(tmp_path / "a", BASE_THRESHOLD), Run(tmp_path / "a", BASE_TUNED)], 50, 0)
