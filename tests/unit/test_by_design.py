"""Which baselines an experiment's classes are matched on by design (evaluation/by_design.py): FN
against make_calls' decoy TN only, never random TN or TN of unknown origin (a user's calls)."""

import polars as pl
import pytest

from workflow_scripts.evaluation.by_design import is_decoy_fn_vs_tn, matched_by_design


def windows_of(error: str, correct: str, strategy: str | None) -> pl.DataFrame:
    frame = pl.DataFrame({"label": [1, 1, 0, 0], "pred_type": [error, error, correct, correct]})
    tn = pl.when(pl.col("pred_type") == "TN").then(pl.lit(strategy, dtype=pl.String))
    return frame.with_columns(tn_strategy=tn)


def test_fn_vs_decoy_tn_matches_the_base_score_its_type_and_the_dinucleotide():
    matched = matched_by_design(windows_of("FN", "TN", "decoy"))
    assert list(matched) == ["base_score", "base_score_type", "dinucleotide"]
    assert "nearest to one FN's" in matched["base_score"]
    assert "canonical dinucleotide" in matched["dinucleotide"]


@pytest.mark.parametrize(
    "error, correct, strategy",
    [("FN", "TN", "random"), ("FP", "TP", None), ("FP", "TN", "decoy"), ("FN", "TN", None)],
)
def test_other_experiments_and_tn_strategies_are_not_matched(error, correct, strategy):
    assert matched_by_design(windows_of(error, correct, strategy)) == {}


def test_a_calls_table_without_tn_strategy_is_not_matched():
    assert not is_decoy_fn_vs_tn(windows_of("FN", "TN", "decoy").drop("tn_strategy"))
