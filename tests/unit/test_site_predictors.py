"""site_calls' predictors and metrics: thresholds learnt from training genes only, the tree against
the re-tuned threshold where the truth lies in the other type's profile, counts by hand, BED."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from threadpoolctl import threadpool_limits

from tests.site_fixtures import profile_genome, settings
from workflow_scripts.sites.candidates import Candidates, find_candidates
from workflow_scripts.sites.folds import assign_folds
from workflow_scripts.sites.items import Items
from workflow_scripts.sites.outputs import bed_text, corrected_calls
from workflow_scripts.sites.predictors import BASE_TUNED, TREE, OutOfFold, predict_out_of_fold
from workflow_scripts.sites.report import site_report
from workflow_scripts.sites.site_metrics import metric_report


@pytest.fixture(autouse=True, scope="module")
def one_openmp_thread():
    """scikit-learn's OpenMP threads spin on a busy machine: one fit took 56 s on 2 threads and
    2 s on 1 at load 11 on 2 cores (the site_calls rule runs with threads: 1 for the same reason)."""
    with threadpool_limits(limits=1, user_api="openmp"):
        yield


@pytest.fixture(scope="module")
def genome():
    scores, sites, genes, clusters = profile_genome()
    found = find_candidates([("chr1", scores)], sites, genes, settings())
    return assign_folds(found, clusters, 5, seed=0)


def scrambled(found: Candidates, fold: int) -> Candidates:
    """`fold`'s candidates with scores 1 - score and flipped labels, its annotated sites removed."""
    in_fold = pl.col("fold") == fold
    table = found.table.with_columns(
        pl.when(in_fold).then(1 - pl.col("base_score")).otherwise(pl.col("base_score")).alias("base_score"),
        pl.when(in_fold)
        .then(~pl.col("is_true_site"))
        .otherwise(pl.col("is_true_site"))
        .alias("is_true_site"),
    )
    kept = found.sites["fold"].to_numpy() != fold
    return Candidates(table, found.features, found.sites.filter(pl.Series(kept)), found.members[kept])


def test_the_tree_beats_the_retuned_threshold_when_the_truth_lies_in_the_other_types_profile(genome):
    items = Items.from_candidates(genome)
    predictions = predict_out_of_fold(genome, items, settings())
    report = site_report(genome, items, predictions, settings(), unscored_sites=0)
    f1 = {name: report["calls"][name]["overall"]["f1"] for name in report["calls"]}
    assert f1[TREE] > 0.9 and f1[BASE_TUNED] < 0.75, f1  # the donor score carries no information
    gain = report["differences"]["tree - base_tuned"]["overall"]["f1"]
    assert gain["verdict"] == "better" and gain["low"] > 0.1, gain
    assert report["scores"]["tree_probability"]["donor"]["pr_auc"] > 0.9
    assert "the tree improves on the re-tuned threshold by +" in report["answer"]


def test_tree_probabilities_are_seeded(genome):
    items = Items.from_candidates(genome)
    first = predict_out_of_fold(genome, items, settings()).tree_probability
    assert np.array_equal(first, predict_out_of_fold(genome, items, settings()).tree_probability)


def test_a_folds_thresholds_and_probabilities_are_learnt_without_its_own_genes(genome):
    """Scrambling fold 1 (scores, labels, annotation) leaves fold 1's thresholds and tree
    probabilities as they were; it moves the other folds' thresholds, which train on fold 1."""
    quick = settings(tree={**settings().tree.to_dict(), "max_iter": 10})
    before = predict_out_of_fold(genome, Items.from_candidates(genome), quick)
    other = scrambled(genome, fold=1)
    after = predict_out_of_fold(other, Items.from_candidates(other), quick)
    for name in (BASE_TUNED, TREE):
        assert after.thresholds[name][1] == before.thresholds[name][1], name
    assert after.thresholds[BASE_TUNED][2] != before.thresholds[BASE_TUNED][2]
    fold_1 = genome.table["fold"].to_numpy() == 1
    assert np.array_equal(after.tree_probability[fold_1], before.tree_probability[fold_1])


def hand_counted() -> tuple[Candidates, Items]:
    """Donor candidates c0 (site A, 0.9), c1 (site A, 0.4), c2 (false, 0.8), c3 (site B, 0.3), c4
    (false, 0.2); site C has no candidate."""
    table = pl.DataFrame(
        {
            "key": [1, 2, 3, 4, 5],
            "splice_type": ["donor"] * 5,
            "base_score": np.array([0.9, 0.4, 0.8, 0.3, 0.2], dtype=np.float32),
            "is_true_site": [True, True, False, True, False],
            "fold": [1] * 5,
            "gene_cluster": ["a"] * 5,
        }
    )
    sites = pl.DataFrame({"splice_type": ["donor"] * 3, "fold": [1] * 3, "gene_cluster": ["a"] * 3})
    members = np.array([[0, 1], [3, -1], [-1, -1]])
    found = Candidates(table, np.zeros((5, 1), np.float32), sites, members)
    return found, Items.from_candidates(found)


def calls(called: np.ndarray, probability: np.ndarray) -> OutOfFold:
    return OutOfFold(tree_probability=probability, thresholds={}, calls={"base_threshold": called})


def test_metrics_match_a_hand_count():
    found, items = hand_counted()
    base = found.table["base_score"].to_numpy()
    report = metric_report(found, items, calls(base >= 0.5, base))
    donor = report["calls"]["base_threshold"]["donor"]
    # called: c0 (site A: TP) and c2 (FP); sites B and C are FN
    assert (donor["tp"], donor["fp"], donor["fn"]) == (1, 1, 2)
    assert (
        donor["precision"] == 0.5
        and donor["recall"] == pytest.approx(1 / 3)
        and donor["f1"] == pytest.approx(0.4)
    )
    # items by score: A 0.9 (+), c2 0.8 (-), B 0.3 (+), c4 0.2 (-); C never recalled: AP = 1/3 * 1 + 1/3 * 2/3
    assert report["scores"]["base_score"]["donor"]["pr_auc"] == pytest.approx(5 / 9)
    # top 3 candidates c0, c2, c1 hit site A only
    assert report["scores"]["base_score"]["donor"]["top_k_accuracy"] == pytest.approx(1 / 3)
    assert report["scores"]["base_score"]["acceptor"] == {"pr_auc": None, "top_k_accuracy": None, "k": 0}
    assert report["calls"]["base_threshold"]["overall"] == donor


def test_bed_lists_the_called_candidates_in_bed6(genome):
    items = Items.from_candidates(genome)
    predictions = predict_out_of_fold(genome, items, settings())
    table = corrected_calls(genome, predictions)
    text = bed_text(table, TREE, "tree_probability", "test track")
    header, *lines = text.splitlines()
    assert header.startswith('track name="tree" description="test track"')
    called = table.filter(pl.col("call_tree"))
    assert len(lines) == called.height > 0
    for line, row in zip(lines, called.iter_rows(named=True)):
        chrom, start, end, name, score, strand = line.split("\t")
        assert (chrom, int(start), int(end), strand) == (
            row["chrom"],
            row["position"] - 1,
            row["position"],
            row["strand"],
        )
        assert name == f"donor:{'annotated' if row['is_true_site'] else 'new'}"
        assert 0 <= int(score) <= 1000 and int(score) == round(row["tree_probability"] * 1000)
    missed = table.filter(~pl.col("is_candidate"))
    assert missed["is_true_site"].all() and not missed["call_tree"].any()


def test_fp_vs_tp_ranks_the_base_models_calls_by_the_tree_better_than_by_the_base_score(genome):
    """The base score carries nothing about which donor calls are true: ROC-AUC near 0.5; the
    tree reads the acceptor bump: near 1, and the paired difference is significant."""
    items = Items.from_candidates(genome)
    predictions = predict_out_of_fold(genome, items, settings())
    diagnostic = site_report(genome, items, predictions, settings(), 0)["diagnostics"]["fp_vs_tp"]
    base = genome.table["base_score"].to_numpy()
    called = base >= 0.5
    assert diagnostic["n"] == int(called.sum())
    assert diagnostic["n_positive"] == int((called & ~genome.table["is_true_site"].to_numpy()).sum())
    roc = {name: values["roc_auc"]["estimate"] for name, values in diagnostic["predictors"].items()}
    assert roc["tree_probability"] > 0.9 and 0.3 < roc["base_score"] < 0.7, roc
    assert diagnostic["differences"]["base_score"]["roc_auc"]["verdict"] == "better"


def test_zero_bootstrap_replicates_give_estimates_and_say_plainly_there_is_no_interval(genome):
    """sites.bootstrap_replicates 0 means no intervals: the differences keep their estimates, the
    reason says 0 replicates were asked for (not that genes are too few), and so does the answer."""
    items = Items.from_candidates(genome)
    predictions = predict_out_of_fold(genome, items, settings())
    report = site_report(genome, items, predictions, settings(bootstrap_replicates=0), 0)
    gain = report["differences"]["tree - base_tuned"]["overall"]["f1"]
    assert gain["estimate"] > 0.1 and gain["low"] is None
    assert gain["reason"] == "0 bootstrap replicates asked for"
    roc = report["diagnostics"]["fp_vs_tp"]["predictors"]["tree_probability"]["roc_auc"]
    assert roc["estimate"] > 0.9 and roc["low"] is None and roc["reason"] == gain["reason"]
    assert "(no intervals: sites.bootstrap_replicates is 0)" in report["answer"]
    assert "genes" not in gain["reason"] and "too few" not in report["answer"]


def test_the_trees_cost_is_logged_before_the_first_fold_and_the_time_left_after_each(genome):
    """sites.flank 1000 ran 30 min with nothing logged between the candidates and the first fold."""
    items = Items.from_candidates(genome)
    lines: list[str] = []
    predict_out_of_fold(genome, items, settings(), progress=lines.append)
    assert lines[0] == (
        f"trees: 25 fits (5 folds, each 4 inner and 1 outer) on up to {genome.table.height:,} candidates "
        "x 103 features, 30 rounds each"
    )
    folds = [line for line in lines if line.startswith("fold ")]
    assert len(folds) == 5 and all("; trees: " in line and line.endswith(" left") for line in folds)
    assert folds[-1].endswith("trees: 0 s left") and not any(line.startswith("warning") for line in lines)


def test_a_large_flank_is_warned_with_its_features():
    from workflow_scripts.sites.predictors import tree_cost_lines

    scores, sites, genes, clusters = profile_genome(n_genes=4)
    found = find_candidates([("chr1", scores)], sites, genes, settings(flank=1000))
    cost, warning = tree_cost_lines(found, settings(flank=1000), 5)
    assert "x 4,003 features" in cost
    assert warning.startswith(
        "warning: sites.flank 1000 gives 4,003 features per candidate, 39x those of flank 25: "
        "the tree fits take roughly that many times as long"
    )


def test_slow_fits_show_progress_within_a_fold():
    """A line where a fit ends 30 s or more after the last line, with the time left at the rate so far."""
    from workflow_scripts.sites.predictors import FitClock

    now, lines = [0.0], []
    clock = FitClock(total_rows=1000, progress=lines.append, clock=lambda: now[0])
    for when, rows in ((10, 100), (40, 100), (50, 100), (100, 200)):
        now[0] = when
        clock.fitted(rows, f"fit at {when}")
    assert lines == [
        "fit at 40 fitted on 100 candidates; trees: 4 min 00 s left",  # 100 rows in the 30 s since the first
        "fit at 100 fitted on 200 candidates; trees: 1 min 52 s left",  # 400 rows in 90 s: 500 left
    ]


def test_a_feature_no_training_candidate_scores_does_not_break_the_tree():
    """A flank past every training gene leaves a column all NaN; scikit-learn's binning raised
    ValueError ("window shape cannot be larger than input array shape"), a traceback in site_calls."""
    from workflow_scripts.sites.predictors import fit_and_predict

    scores, sites, genes, clusters = profile_genome(n_genes=8)
    found = assign_folds(
        find_candidates([("chr1", scores)], sites, genes, settings(flank=1000)), clusters, 2, 0
    )
    assert (~np.isfinite(found.features).any(axis=0)).any()  # columns no candidate has a score in
    fold = found.table["fold"].to_numpy()
    probability = fit_and_predict(found, fold == 1, fold == 2, settings(flank=1000))
    assert len(probability) == int((fold == 2).sum()) and np.isfinite(probability).all()
