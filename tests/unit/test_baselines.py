"""Baselines with known answers, and the model-versus-baselines document."""

import json

import numpy as np
import polars as pl
import pytest
from threadpoolctl import threadpool_limits

from workflow_scripts.comparison_fields import (
    BASELINES,
    DIFFERENCE_FIELDS,
    ESTIMATE_FIELDS,
    GROUP_FIELDS,
    METRICS,
    MODEL,
    REPORT_FIELDS,
    ROW_FIELDS,
    comparison_rows,
)
from workflow_scripts.config.types import EvaluateSection, complete_typed_section
from workflow_scripts.evaluation import baselines
from workflow_scripts.evaluation.comparison import compare_with_baselines
from workflow_scripts.metrics import roc_auc


@pytest.fixture(autouse=True)
def one_openmp_thread():
    """score_profile_tree's fits on one thread, as in the evaluate job (OMP_NUM_THREADS = its
    threads): OpenMP threads waiting for each other on busy cores make them many times slower."""
    with threadpool_limits(limits=1, user_api="openmp"):
        yield


CONFIG = complete_typed_section(
    "evaluate", {"kmer_max_k": 3, "bootstrap_replicates": 200, "bootstrap_seed": 0, "profile_flank": 2}
)
SEED = 0  # the run's train.seed
SPLITS = ("train", "val", "test")


def random_bases(rng, length, alphabet="ACGT"):
    return "".join(rng.choice(list(alphabet), length))


def windows_frame(sequences, labels, splits, **columns) -> pl.DataFrame:
    """A windows.parquet-like table; every window is its own gene unless gene_id is given."""
    columns.setdefault("gene_id", [f"g{i}" for i in range(len(sequences))])
    return pl.DataFrame(
        {
            "id": [f"w{i}" for i in range(len(sequences))],
            "split": list(splits),
            "label": list(labels),
            "sequence": list(sequences),
            "length": [len(s) for s in sequences],
            **columns,
        }
    ).with_columns(pl.col("label").cast(pl.Int8), pl.col("length").cast(pl.Int32))


def split_labels(n_per_split):
    """Alternating labels within each split: train, val and test have both classes."""
    splits = np.repeat(SPLITS, n_per_split)
    return splits, np.arange(splits.size) % 2


def by_split(frame):
    return tuple(frame.filter(pl.col("split") == split) for split in SPLITS)


def motif_windows(rng, labels, motif_error="TAG", motif_correct="GTA"):
    """A/C background with one 3-mer inserted: same base composition in both classes."""
    sequences = []
    for label in labels:
        background = random_bases(rng, 40, "AC")
        cut = int(rng.integers(0, 41))
        sequences.append(background[:cut] + (motif_error if label else motif_correct) + background[cut:])
    return sequences


def test_kmer_counts_are_exact():
    counts = baselines.kmer_counts(["ACGTN", "AAAA"], 2).toarray()
    expected = np.zeros((2, 20))
    expected[0, [0, 1, 2, 3]] = 1  # A C G T (N skipped)
    expected[0, [4 + 1, 4 + 6, 4 + 11]] = 1  # AC CG GT (GT-N skipped)
    expected[1, 0], expected[1, 4] = 4, 3  # AAAA: A x4, AA x3
    np.testing.assert_array_equal(counts, expected)


def test_a_separating_3mer_gives_kmer_auc_1_and_1mers_cannot():
    rng = np.random.default_rng(0)
    splits, labels = split_labels(80)
    frame = windows_frame(motif_windows(rng, labels), labels, splits)
    train, val, test = by_split(frame)
    scores, details = baselines.kmer_scores(train, val, test, max_k=3)
    assert roc_auc(test["label"].to_numpy(), scores) == 1.0
    assert details["C"] in baselines.C_GRID and details["c_choice"] == "validation roc_auc"
    composition_only, _ = baselines.kmer_scores(train, val, test, max_k=1)
    assert roc_auc(test["label"].to_numpy(), composition_only) < 0.75


def test_kmer_without_a_usable_validation_split_uses_the_fixed_strength():
    rng = np.random.default_rng(1)
    splits, labels = split_labels(40)
    frame = windows_frame(motif_windows(rng, labels), labels, splits)
    train, val, test = by_split(frame)
    _, details = baselines.kmer_scores(train, val.filter(pl.col("label") == 0), test, max_k=3)
    assert details["C"] == baselines.FALLBACK_C and "one class" in details["c_choice"]
    scores, details = baselines.kmer_scores(train, val.clear(), test, max_k=3)
    assert details["C"] == baselines.FALLBACK_C and "no windows" in details["c_choice"]
    assert roc_auc(test["label"].to_numpy(), scores) == 1.0


def test_orientation_is_learned_on_train_never_on_test():
    train = pl.DataFrame({"label": [1, 1, 1, 0, 0, 0], "score": [0.1, 0.2, 0.3, 0.7, 0.8, 0.9]})
    same_direction = pl.DataFrame({"label": [1, 0, 1, 0], "score": [0.2, 0.9, 0.1, 0.6]})
    reversed_direction = pl.DataFrame({"label": [1, 0, 1, 0], "score": [0.9, 0.2, 0.6, 0.1]})
    scores, details = baselines.oriented_column(train, same_direction, "score")
    assert details == {"orientation": -1, "train_roc_auc": 1.0}
    assert roc_auc(same_direction["label"], scores) == 1.0
    scores, _ = baselines.oriented_column(train, reversed_direction, "score")
    assert roc_auc(reversed_direction["label"], scores) == 0.0  # test's own direction is not used
    scores, details = baselines.oriented_column(train.with_columns(-pl.col("score")), same_direction, "score")
    assert details["orientation"] == 1


def test_score_and_type_finds_what_the_type_alone_tells():
    """Donor windows are mostly errors, acceptor windows mostly not, at the same scores: the score
    alone ranks at chance, the score with the splice type does not (the model is given the type)."""
    rng = np.random.default_rng(3)
    n = 2000
    donor = rng.random(n) < 0.5
    labels = (rng.random(n) < np.where(donor, 0.8, 0.2)).astype(int)
    frame = pl.DataFrame(
        {"label": labels, "score": rng.random(n), "splice_type": np.where(donor, "donor", "acceptor")}
    )
    train, test = frame.head(1000), frame.tail(1000)
    alone, _ = baselines.oriented_column(train, test, "score")
    with_type, details = baselines.score_and_type_scores(train, test)
    assert abs(roc_auc(test["label"], alone) - 0.5) < 0.05
    assert roc_auc(test["label"], with_type) > 0.75 and details["coefficients"][1] > 0
    with pytest.raises(baselines.BaselineUnavailable, match="no 'splice_type' column"):
        baselines.score_and_type_scores(train.drop("splice_type"), test)


def test_missing_or_incomplete_columns_make_a_baseline_unavailable():
    train = pl.DataFrame({"label": [1, 0], "score": [0.5, None]})
    with pytest.raises(baselines.BaselineUnavailable, match="missing for 1 train"):
        baselines.oriented_column(train, train, "score")
    with pytest.raises(baselines.BaselineUnavailable, match="no 'score' column"):
        baselines.oriented_column(train.drop("score"), train, "score")
    with pytest.raises(baselines.BaselineUnavailable, match="one class"):
        one_class = pl.DataFrame({"label": [0, 0], "score": [1.0, 2.0]})
        baselines.oriented_column(one_class, one_class, "score")


def test_site_dinucleotide_is_the_intron_pair_on_the_windows_strand():
    # flank 3: the site is base 3 of a 7-nt window; donors read bases 4-5, acceptors 1-2
    frame = pl.DataFrame(
        {
            "sequence": ["aaaCGTa", "cAGcccc", "aaaCGT", "TTTATTT", "ACG"],
            "splice_type": ["donor", "acceptor", "donor", "acceptor", "donor"],
            "position": [10, 20, 30, 40, 50],
        }
    ).with_columns(pl.col("sequence").str.len_bytes().alias("length"))
    pairs = baselines.site_dinucleotides(frame, full_length=7)
    assert pairs.tolist() == ["GT", "AG", "unknown", "TT", "unknown"]  # 6 and 3 nt: clipped
    recorded = frame.with_columns(pl.Series("site_offset", [3, 3, 3, 4, 0]))
    assert baselines.site_dinucleotides(recorded, 7).tolist() == ["GT", "AG", "GT", "TA", "CG"]
    sequences_mode = frame.drop("position", "splice_type")
    assert baselines.site_dinucleotides(sequences_mode, 7).tolist() == ["CG", "CC", "AC", "AT", "CG"]


def test_dinucleotide_detector_finds_a_noncanonical_pair_signal():
    rng = np.random.default_rng(2)
    splits, labels = split_labels(60)
    sequences = [random_bases(rng, 11) + ("GC" if label else "GT") + random_bases(rng, 8) for label in labels]
    frame = windows_frame(
        sequences, labels, splits, splice_type=["donor"] * len(labels), position=list(range(len(labels)))
    )
    train, _, test = by_split(frame)
    scores, details = baselines.dinucleotide_scores(train, test, full_length=21)
    assert roc_auc(test["label"].to_numpy(), scores) == 1.0
    assert details["train_error_rate"]["GC"] > 0.9 > 0.1 > details["train_error_rate"]["GT"]
    assert details["test_unknown_site"] == 0


def test_unknown_and_unseen_dinucleotides_score_the_train_prevalence():
    scores, details = baselines.category_rate_scores(
        ["GT", "GT", "GC", "unknown"], [0, 0, 1, 1], ["GT", "AT", "unknown"]
    )
    assert details["train_prevalence"] == 0.5
    assert scores.tolist() == pytest.approx([(0 + 0.5) / 3, 0.5, 0.5])


def test_length_detector_finds_a_length_only_signal():
    """Errors are clipped windows; their bases are random, so only the length tells them apart."""
    rng = np.random.default_rng(3)
    splits, labels = split_labels(60)
    sequences = [random_bases(rng, int(rng.integers(25, 41)) if label else 41) for label in labels]
    frame = windows_frame(sequences, labels, splits, position=list(range(len(labels))))
    report = compare_with_baselines(frame, predictions_of(frame, rng, signal=0.0), CONFIG, SEED)
    overall = report["overall"]["predictors"]
    assert overall["length"]["roc_auc"]["estimate"] > 0.95
    assert report["baselines"]["length"]["orientation"] == -1  # shorter = error, learned on train
    assert overall["kmer"]["roc_auc"]["estimate"] < 0.8  # frequencies: length removed
    assert report["baselines"]["dinucleotide"]["test_unknown_site"] == int(
        (report_test(frame)["label"] == 1).sum()
    )


def report_test(frame):
    return frame.filter(pl.col("split") == "test")


def predictions_of(frame, rng, signal):
    """Model predictions for the test windows: noise plus `signal` times the label."""
    test = report_test(frame)
    prob = 1 / (1 + np.exp(-(signal * (2 * test["label"].to_numpy() - 1) + rng.normal(size=test.height))))
    return pl.DataFrame({"id": test["id"], "prob": prob})


def full_windows(rng, n_per_split=60):
    """Calls-mode-like windows: splice types, a base score (errors score low), positions, 3 windows
    per gene, and random score profiles (one value per base)."""
    splits, labels = split_labels(n_per_split)
    n = labels.size
    sequences = motif_windows(rng, labels)
    return windows_frame(
        sequences,
        labels,
        splits,
        gene_id=[f"g{i // 3}" for i in range(n)],
        splice_type=np.where(np.arange(n) % 4 < 2, "donor", "acceptor").tolist(),
        score=(0.8 - 0.3 * labels + 0.2 * rng.random(n)).tolist(),
        position=list(range(n)),
        **{
            name: [rng.random(len(s)).tolist() for s in sequences]
            for name in ("donor_scores", "acceptor_scores")
        },
    )


def test_comparison_document_layout_and_known_answers():
    rng = np.random.default_rng(4)
    frame = full_windows(rng)
    report = compare_with_baselines(frame, predictions_of(frame, rng, signal=1.0), CONFIG, SEED)
    assert tuple(report) == REPORT_FIELDS
    json.dumps(report, allow_nan=False)
    assert set(report["baselines"]) == set(BASELINES) and report["skipped"] == {}
    assert sorted(report["per_splice_type"]) == ["acceptor", "donor"]
    for group in (report["overall"], *report["per_splice_type"].values()):
        assert tuple(group) == GROUP_FIELDS
        assert set(group["predictors"]) == {MODEL, *BASELINES} and set(group["differences"]) == set(BASELINES)
        for metric in METRICS:
            assert tuple(group["predictors"][MODEL][metric]) == ESTIMATE_FIELDS
    overall = report["overall"]
    prevalence = overall["n_positive"] / overall["n"]
    assert overall["n"] == 60 and overall["n_genes"] == 20
    assert overall["predictors"]["chance"]["roc_auc"]["estimate"] == 0.5
    assert overall["predictors"]["chance"]["pr_auc"]["estimate"] == pytest.approx(prevalence)
    assert overall["predictors"]["kmer"]["roc_auc"]["estimate"] == 1.0
    assert overall["predictors"]["base_score"]["roc_auc"]["estimate"] == 1.0  # low score = error
    assert report["baselines"]["base_score"]["orientation"] == -1
    model_roc = overall["predictors"][MODEL]["roc_auc"]["estimate"]
    assert overall["differences"]["kmer"]["roc_auc"]["estimate"] == pytest.approx(model_roc - 1.0)
    assert report["per_splice_type"]["donor"]["n"] + report["per_splice_type"]["acceptor"]["n"] == 60
    rows = comparison_rows(report)
    assert len(rows) == 3 * len(METRICS) * (1 + len(BASELINES)) and all(
        tuple(row) == ROW_FIELDS for row in rows
    )
    kmer_row = next(
        r for r in rows if (r["group"], r["predictor"], r["metric"]) == ("overall", "kmer", "roc_auc")
    )
    assert kmer_row["estimate"] == 1.0 and kmer_row["difference"] == pytest.approx(model_roc - 1.0)
    assert kmer_row["verdict"] == overall["differences"]["kmer"]["roc_auc"]["verdict"] == "worse"
    for differences in (group["differences"] for group in (overall, *report["per_splice_type"].values())):
        assert all(tuple(d[metric]) == DIFFERENCE_FIELDS for d in differences.values() for metric in METRICS)
    assert rows[0]["predictor"] == MODEL and rows[0]["difference"] is None


def test_without_score_or_splice_type_the_document_says_so():
    rng = np.random.default_rng(5)
    frame = full_windows(rng, 30).drop("score", "splice_type")
    report = compare_with_baselines(frame, predictions_of(frame, rng, signal=1.0), CONFIG, SEED)
    assert report["skipped"] == {
        "base_score": "the windows have no 'score' column",
        "base_score_type": "the windows have no 'score' column",
    }
    assert "base_score" not in report["overall"]["predictors"]
    assert report["per_splice_type"] == {}


def test_predictions_must_be_test_windows():
    rng = np.random.default_rng(6)
    frame = full_windows(rng, 30)
    predictions = predictions_of(frame, rng, 1.0)
    with pytest.raises(ValueError, match="not test windows"):
        compare_with_baselines(
            frame, pl.concat([predictions, pl.DataFrame({"id": ["w0"], "prob": [0.5]})]), CONFIG, SEED
        )


def test_the_comparison_reads_the_typed_evaluate_section():
    section = {"kmer_max_k": 6, "bootstrap_replicates": 1000, "bootstrap_seed": 0, "profile_flank": 25}
    typed = complete_typed_section("evaluate", section)
    assert isinstance(typed, EvaluateSection)
    assert (typed.kmer_max_k, typed.bootstrap_replicates, typed.bootstrap_seed, typed.profile_flank) == (
        6,
        1000,
        0,
        25,
    )
