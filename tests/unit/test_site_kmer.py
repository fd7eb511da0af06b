"""site_calls' k-mer baseline (sites/kmer.py): the sequence around each candidate, out of fold over
the tree's folds; it wins where a motif marks the true sites and the score profiles say nothing,
and gains nothing where the sequence is random."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import polars as pl
import pytest
from threadpoolctl import threadpool_limits

from tests.site_fixtures import motif_genome, profile_genome, settings
from workflow_scripts.config.types import complete_typed_section
from workflow_scripts.sites.candidates import Candidates, find_candidates
from workflow_scripts.sites.folds import assign_folds
from workflow_scripts.sites.items import Items
from workflow_scripts.sites.kmer import kmer_baseline, kmer_features, with_kmer
from workflow_scripts.sites.outputs import KMER_COLUMNS, TABLE_COLUMNS, corrected_calls
from workflow_scripts.sites.predictors import (
    BASE_THRESHOLD,
    BASE_TUNED,
    ERRORSEQ,
    KMER,
    TREE,
    OutOfFold,
    predict_out_of_fold,
)
from workflow_scripts.sites.report import site_report

MOTIF = "GCGTTACATG"
GENES = 60  # 1,000 nt apart
WINDOW = complete_typed_section("window", {"flank": 50})
EVALUATE = complete_typed_section("evaluate", {"kmer_max_k": 4})


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """OpenMP (the tree) and BLAS (lbfgs) on one thread each, as in the rule (threads: 1, which
    Snakemake passes on as OMP_NUM_THREADS and OPENBLAS_NUM_THREADS): on a busy machine 2 BLAS
    threads made the k-mer fits 8x slower."""
    with threadpool_limits(limits=1):
        yield


def flat_candidates() -> Candidates:
    """Donor peaks of random score, half of them annotated; no score profile tells which."""
    scores, sites, genes, clusters = profile_genome(n_genes=GENES, profile_signal=False)
    found = find_candidates([("chr1", scores)], sites, genes, settings())
    return assign_folds(found, clusters, 5, seed=0)


def report_with_kmer(found: Candidates, motif: str | None) -> tuple[dict, OutOfFold]:
    genome = motif_genome(found.sites, 1000 * GENES + 100, motif)
    items = Items.from_candidates(found)
    predictions = predict_out_of_fold(found, items, settings())
    predictions, facts = kmer_baseline(predictions, found, items, genome, WINDOW, EVALUATE)
    return site_report(found, items, predictions, settings(), 0, kmer=facts), predictions


@pytest.fixture(scope="module")
def flat():
    return flat_candidates()


@pytest.fixture(scope="module")
def motif_run(flat):
    return report_with_kmer(flat, MOTIF)


def test_the_kmer_baseline_beats_the_base_model_when_a_motif_marks_the_true_sites(motif_run):
    report, _ = motif_run
    f1 = {name: report["calls"][name]["overall"]["f1"] for name in report["calls"]}
    assert f1[KMER] > 0.8 and f1[BASE_THRESHOLD] < 0.6 and f1[BASE_TUNED] < 0.65, f1
    over_tuned = report["differences"]["kmer - base_tuned"]["overall"]["f1"]
    assert over_tuned["verdict"] == "better" and over_tuned["low"] > 0.1, over_tuned
    tree_gain = report["differences"]["tree - kmer"]["overall"]["f1"]
    assert tree_gain["verdict"] == "worse" and tree_gain["high"] < -0.1, tree_gain
    assert report["scores"]["kmer_probability"]["donor"]["pr_auc"] > 0.8
    assert report["kmer"]["window_nt"] == 101 and report["kmer"]["features"] == 4 + 16 + 64 + 256 + 1
    assert "a k-mer model on the sequence alone reaches F1" in report["answer"]
    assert "the tree is worse than it by -" in report["answer"]


def test_the_kmer_baseline_gains_nothing_on_random_sequence(flat):
    report, _ = report_with_kmer(flat, None)
    f1 = {name: report["calls"][name]["overall"]["f1"] for name in report["calls"]}
    assert f1[KMER] < f1[BASE_TUNED] + 0.02, f1
    over_tuned = report["differences"]["kmer - base_tuned"]["overall"]["f1"]
    assert over_tuned["verdict"] in ("not better", "worse") and over_tuned["low"] < 0, over_tuned


def test_kmer_windows_read_the_transcripts_direction(flat):
    """The motif is planted downstream of + and - strand sites alike: its 4-mers are counted in
    the windows of the true candidates of both strands."""
    genome = motif_genome(flat.sites, 1000 * GENES + 100, MOTIF)
    features = kmer_features(flat, genome, 50, 4).toarray()
    column = 4 + 16 + 64 + int(MOTIF[:4].translate(str.maketrans("ACGT", "0123")), 4)  # GCGT
    true, strand = flat.table["is_true_site"].to_numpy(), flat.table["strand"].to_numpy()
    for sign in "+-":
        assert (features[true & (strand == sign), column] > 0).all(), sign
    assert (features[:, -1] == 1).all()  # every candidate here is a donor


def test_a_folds_kmer_predictions_and_thresholds_are_learnt_without_its_own_genes(flat):
    """Flipping fold 1's labels leaves fold 1's k-mer probabilities and thresholds as they were."""
    genome = motif_genome(flat.sites, 1000 * GENES + 100, MOTIF)
    features = kmer_features(flat, genome, 50, 4)
    in_fold = pl.col("fold") == 1
    flipped = flat.table.with_columns(
        pl.when(in_fold).then(~pl.col("is_true_site")).otherwise(pl.col("is_true_site")).alias("is_true_site")
    )
    other = Candidates(flipped, flat.features, flat.sites, flat.members)
    empty = OutOfFold(np.zeros(flat.table.height), {}, {})
    before, _ = with_kmer(empty, flat, Items.from_candidates(flat), features)
    after, _ = with_kmer(empty, other, Items.from_candidates(other), features)
    fold_1 = flat.table["fold"].to_numpy() == 1
    assert np.array_equal(after.kmer_probability[fold_1], before.kmer_probability[fold_1])
    assert after.thresholds[KMER][1] == before.thresholds[KMER][1]
    assert after.thresholds[KMER][2] != before.thresholds[KMER][2]


def test_corrected_calls_carry_the_kmer_columns(flat, motif_run):
    _, predictions = motif_run
    table = corrected_calls(flat, predictions)
    assert table.columns == [*TABLE_COLUMNS, *KMER_COLUMNS]
    candidates = table.filter(pl.col("is_candidate"))
    assert candidates["kmer_probability"].is_not_null().all()
    assert (candidates["call_kmer"] == (candidates["kmer_probability"] >= candidates["kmer_threshold"])).all()
    assert not table.filter(~pl.col("is_candidate"))["call_kmer"].any()
    assert set(predictions.calls) == {BASE_THRESHOLD, BASE_TUNED, TREE, KMER}


def test_errorseq_is_compared_with_the_kmer_baseline_too(flat, motif_run):
    """With sites.model, the differences and the answer hold errorseq - kmer (here errorseq's calls
    are the k-mer baseline's own: a difference of 0)."""
    _, predictions = motif_run
    same = replace(
        predictions,
        calls={**predictions.calls, ERRORSEQ: predictions.calls[KMER]},
        thresholds={**predictions.thresholds, ERRORSEQ: predictions.thresholds[KMER]},
        errorseq_probability=predictions.kmer_probability,
    )
    report = site_report(flat, Items.from_candidates(flat), same, settings(), 0)
    difference = report["differences"]["errorseq - kmer"]["overall"]["f1"]
    assert difference["estimate"] == 0 and difference["verdict"] == "not better", difference
    assert "errorseq's model does not improve on it: +0.000 F1" in report["answer"]
