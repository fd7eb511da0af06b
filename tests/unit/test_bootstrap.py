"""Gene-level bootstrap: whole genes are resampled, intervals cover known values, differences are paired."""

import math

import numpy as np
import pytest

from workflow_scripts.comparison_fields import DIFFERENCE_FIELDS, ESTIMATE_FIELDS, GROUP_FIELDS
from workflow_scripts.evaluation.bootstrap import GeneIndex, compare_predictors
from workflow_scripts.metrics import average_precision, curve_areas, roc_auc


def normal_scores(rng, n_positive, n_negative, shift):
    """Negatives ~ N(0, 1), positives ~ N(shift, 1): ROC-AUC = Phi(shift / sqrt(2))."""
    labels = np.r_[np.ones(n_positive, int), np.zeros(n_negative, int)]
    return labels, rng.normal(size=labels.size) + shift * labels


def width(estimate):
    return estimate["high"] - estimate["low"]


def test_replicates_keep_genes_whole():
    genes = np.repeat(np.arange(30), np.arange(1, 31))  # gene g has g + 1 windows
    index = GeneIndex.from_gene_ids(np.random.default_rng(1).permutation(genes))
    rng = np.random.default_rng(0)
    for _ in range(50):
        drawn = index.resample(rng)
        times_drawn = np.bincount(drawn, minlength=genes.size)
        shuffled_genes = np.random.default_rng(1).permutation(genes)
        for gene in range(30):
            counts = times_drawn[shuffled_genes == gene]
            assert counts.min() == counts.max(), "a gene's windows were drawn a different number of times"
        assert np.bincount(shuffled_genes[drawn], minlength=30).sum() == drawn.size
        assert len(np.unique(shuffled_genes[drawn])) <= 30


def test_gene_level_interval_is_wider_than_window_level_for_correlated_windows():
    """Windows of a gene share a gene effect: resampling windows would understate the uncertainty."""
    rng = np.random.default_rng(3)
    n_genes, per_gene = 40, 25
    gene_ids = np.repeat(np.arange(n_genes), per_gene)
    gene_error_rate = rng.uniform(0.05, 0.6, n_genes)
    labels = (rng.random(gene_ids.size) < gene_error_rate[gene_ids]).astype(int)
    scores = rng.normal(size=n_genes)[gene_ids] + 0.3 * labels + 0.2 * rng.normal(size=gene_ids.size)
    by_gene = compare_predictors(labels, {"m": scores}, gene_ids, "m", 400, 0)
    by_window = compare_predictors(labels, {"m": scores}, np.arange(gene_ids.size), "m", 400, 0)
    assert by_gene["n_genes"] == n_genes and by_window["n_genes"] == gene_ids.size
    assert width(by_gene["predictors"]["m"]["roc_auc"]) > 1.8 * width(by_window["predictors"]["m"]["roc_auc"])


def test_interval_covers_the_true_auc_in_most_repetitions():
    shift = 1.0
    true_auc = 0.5 * (1 + math.erf(shift / 2))  # Phi(shift / sqrt(2))
    covered = 0
    for seed in range(50):
        labels, scores = normal_scores(np.random.default_rng(seed), 150, 300, shift)
        result = compare_predictors(labels, {"m": scores}, np.arange(labels.size), "m", 300, seed)
        roc = result["predictors"]["m"]["roc_auc"]
        covered += roc["low"] <= true_auc <= roc["high"]
    assert covered >= 45, f"the 95% interval covered the true AUC in {covered} of 50 repetitions"


def test_point_estimates_are_the_metrics_module_values_and_layout_is_declared():
    labels, scores = normal_scores(np.random.default_rng(7), 40, 60, 0.8)
    genes = np.arange(labels.size) // 4
    result = compare_predictors(labels, {"m": scores, "b": -scores}, genes, "m", 100, 0)
    assert tuple(result) == GROUP_FIELDS
    assert tuple(result["predictors"]["m"]["roc_auc"]) == ESTIMATE_FIELDS
    assert result["predictors"]["m"]["roc_auc"]["estimate"] == pytest.approx(roc_auc(labels, scores))
    assert result["predictors"]["m"]["pr_auc"]["estimate"] == pytest.approx(average_precision(labels, scores))
    assert result["n"] == 100 and result["n_positive"] == 40 and result["n_genes"] == 25
    assert set(result["differences"]) == {"b"}
    low, high = (result["predictors"]["m"]["roc_auc"][key] for key in ("low", "high"))
    assert low < result["predictors"]["m"]["roc_auc"]["estimate"] < high


def test_paired_difference_is_tighter_than_the_separate_intervals():
    """A model that adds a little to the baseline's score: the paired difference is clearly positive
    even though the two separate intervals overlap."""
    rng = np.random.default_rng(11)
    labels, base = normal_scores(rng, 150, 350, 1.0)
    model = base + 0.2 * labels + 0.1 * rng.normal(size=labels.size)
    result = compare_predictors(
        labels, {"model": model, "base": base}, np.arange(labels.size) // 2, "model", 300, 0
    )
    model_roc, base_roc = (result["predictors"][name]["roc_auc"] for name in ("model", "base"))
    diff = result["differences"]["base"]["roc_auc"]
    assert diff["estimate"] == pytest.approx(model_roc["estimate"] - base_roc["estimate"])
    assert model_roc["low"] < base_roc["high"], "separate intervals overlap in this set-up"
    assert diff["low"] > 0 and diff["verdict"] == "better"
    assert tuple(diff) == DIFFERENCE_FIELDS
    assert width(diff) < math.hypot(width(model_roc), width(base_roc))
    reversed_roles = compare_predictors(
        labels, {"model": model, "base": base}, np.arange(labels.size) // 2, "base", 300, 0
    )["differences"]["model"]["roc_auc"]
    assert reversed_roles["high"] < 0 and reversed_roles["verdict"] == "worse"


def test_a_baseline_the_model_only_matches_is_not_better():
    rng = np.random.default_rng(12)
    labels, base = normal_scores(rng, 100, 100, 1.0)
    same_ranking = 2 * base + 1  # the model ranks exactly as the baseline: difference 0 on every replicate
    noisy_copy = base + 0.05 * rng.normal(size=labels.size)
    result = compare_predictors(
        labels,
        {"model": same_ranking, "base": base, "copy": noisy_copy},
        np.arange(labels.size),
        "model",
        200,
        0,
    )
    assert result["differences"]["base"]["roc_auc"] == {
        "estimate": 0.0,
        "low": 0.0,
        "high": 0.0,
        "reason": None,
        "verdict": "not better",
    }
    copy = result["differences"]["copy"]["roc_auc"]
    assert copy["low"] < 0 < copy["high"] and copy["verdict"] == "not better"


def test_without_an_interval_the_verdict_is_not_better():
    labels = np.array([1, 1, 1, 0, 0, 0, 0, 0, 0])
    genes = np.array(["a", "a", "a", "b", "b", "b", "c", "c", "c"])
    result = compare_predictors(labels, {"m": np.arange(9.0)[::-1], "b": np.zeros(9)}, genes, "m", 200, 0)
    difference = result["differences"]["b"]["roc_auc"]
    assert difference["estimate"] == 0.5 and difference["low"] is None
    assert difference["verdict"] == "not better" and "replicates drew both classes" in difference["reason"]


def test_the_replicate_loop_computes_the_metrics_module_values():
    rng = np.random.default_rng(13)
    for _ in range(100):
        labels = rng.integers(0, 2, int(rng.integers(2, 40)))
        labels[:2] = (0, 1)
        scores = rng.integers(0, 5, labels.size) / 4  # many ties
        assert curve_areas(labels, scores) == (roc_auc(labels, scores), average_precision(labels, scores))


def test_constant_score_is_chance():
    labels, scores = normal_scores(np.random.default_rng(5), 30, 90, 1.0)
    result = compare_predictors(
        labels, {"m": scores, "chance": np.zeros(labels.size)}, np.arange(120) // 3, "m", 200, 0
    )
    chance = result["predictors"]["chance"]
    assert (chance["roc_auc"]["estimate"], chance["roc_auc"]["low"], chance["roc_auc"]["high"]) == (
        0.5,
        0.5,
        0.5,
    )
    assert chance["pr_auc"]["estimate"] == pytest.approx(0.25)
    assert result["differences"]["chance"]["roc_auc"]["estimate"] == pytest.approx(
        result["predictors"]["m"]["roc_auc"]["estimate"] - 0.5
    )


def test_replicates_with_one_class_are_dropped_and_too_many_drops_give_no_interval():
    labels = np.array([1, 1, 1, 0, 0, 0, 0, 0, 0])
    genes = np.array(["a", "a", "a", "b", "b", "b", "c", "c", "c"])  # all errors sit in gene a
    scores = np.arange(9.0)[::-1]
    result = compare_predictors(labels, {"m": scores}, genes, "m", 500, 0)
    assert result["n_dropped_replicates"] > 100  # P(no gene a in 3 draws) + P(only a) = 1/3
    assert result["n_valid_replicates"] + result["n_dropped_replicates"] == 500
    roc = result["predictors"]["m"]["roc_auc"]
    assert roc["estimate"] == 1.0 and roc["low"] is None and roc["high"] is None
    assert "replicates drew both classes" in roc["reason"]


def test_one_class_has_no_estimate():
    result = compare_predictors(np.zeros(10, int), {"m": np.arange(10.0)}, np.arange(10), "m", 50, 0)
    assert result["predictors"]["m"]["roc_auc"] == {
        "estimate": None,
        "low": None,
        "high": None,
        "reason": "one class only in these windows",
    }
    assert result["n_valid_replicates"] == 0


def test_seeded_and_reproducible():
    labels, scores = normal_scores(np.random.default_rng(2), 50, 50, 0.5)
    genes = np.arange(100) // 5
    first, again, other = (
        compare_predictors(labels, {"m": scores}, genes, "m", 100, seed) for seed in (4, 4, 5)
    )
    assert first == again
    assert first["predictors"]["m"]["roc_auc"]["low"] != other["predictors"]["m"]["roc_auc"]["low"]


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError, match="reference"):
        compare_predictors([0, 1], {"m": [0.1, 0.2]}, [0, 1], "model", 10, 0)
    with pytest.raises(ValueError, match="differ in length"):
        compare_predictors([0, 1], {"m": [0.1, 0.2, 0.3]}, [0, 1], "m", 10, 0)
    with pytest.raises(ValueError, match="differ in length"):
        compare_predictors([0, 1], {"m": [0.1, 0.2]}, [0, 1, 2], "m", 10, 0)
