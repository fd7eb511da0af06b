"""The comparison in words (the evaluate log) and in rows: verdicts said plainly, leaks flagged."""

import numpy as np

from workflow_scripts.comparison_fields import ComparisonReport, comparison_rows
from workflow_scripts.evaluation.bootstrap import compare_predictors
from workflow_scripts.evaluation.comparison_text import comparison_sentences


def report_of(labels, scores, genes, per_splice_type=None, matched=None) -> ComparisonReport:
    group = compare_predictors(labels, scores, genes, "model", 300, 0)
    return ComparisonReport(
        confidence=0.95,
        n_replicates=300,
        seed=0,
        resampled_unit="gene_id",
        reference="model",
        baselines={},
        skipped={"base_score": "the windows have no 'score' column"},
        matched_by_design=matched or {},
        overall=group,
        per_splice_type=per_splice_type or {},
    )


def separable(rng, n=300):
    labels = np.r_[np.ones(n // 2, int), np.zeros(n - n // 2, int)]
    return labels, rng.normal(size=n) + 2.0 * labels


def test_a_baseline_the_model_beats_gets_no_warning_and_one_it_does_not_gets_one():
    rng = np.random.default_rng(0)
    labels, model = separable(rng)
    noise = rng.normal(size=labels.size)
    stronger = model + 3.0 * labels  # a baseline better than the model
    report = report_of(
        labels,
        {"model": model, "kmer": noise, "chance": np.zeros(labels.size), "base_score": stronger},
        np.arange(labels.size) // 3,
    )
    lines = comparison_sentences(report)
    assert lines[0].startswith(f"baselines on {labels.size} test windows of {labels.size // 3} genes")
    kmer = next(line for line in lines if line.startswith("  model vs kmer: ROC-AUC"))
    assert kmer.count("): better") == 2  # ROC-AUC and PR-AUC; "not better" would read "): not better"
    warnings = [line for line in lines if "does NOT beat" in line]
    assert len(warnings) == 2 and all("base_score" in line and "it is worse" in line for line in warnings)
    assert "  base_score not scored: the windows have no 'score' column" in lines


def test_a_leak_detector_above_chance_is_flagged_per_group():
    rng = np.random.default_rng(1)
    labels, model = separable(rng)
    length = np.where(labels == 1, 300, 401) + rng.integers(-150, 1, labels.size)  # errors are shorter
    donor = np.arange(labels.size) % 2 == 0
    scores = {"model": model, "length": -length.astype(float)}
    per_type = {
        "donor": compare_predictors(
            labels[donor],
            {k: v[donor] for k, v in scores.items()},
            (np.arange(labels.size) // 3)[donor],
            "model",
            300,
            0,
        )
    }
    lines = comparison_sentences(report_of(labels, scores, np.arange(labels.size) // 3, per_type))
    leaks = [line for line in lines if "leak: window length alone" in line]
    assert len(leaks) == 2 and leaks[1].startswith("donor sites: leak")


def test_rows_carry_the_verdict_of_the_difference():
    rng = np.random.default_rng(2)
    labels, model = separable(rng)
    report = report_of(labels, {"model": model, "chance": np.zeros(labels.size)}, np.arange(labels.size))
    rows = comparison_rows(report)
    chance = [row for row in rows if row["predictor"] == "chance"]
    assert [row["verdict"] for row in chance] == ["better", "better"]
    assert all(row["verdict"] is None for row in rows if row["predictor"] == "model")


def test_a_dinucleotide_above_chance_is_named_sequence_content_not_shape():
    """The site's two bases are sequence content: they were reported as 'the windows' shape'."""
    rng = np.random.default_rng(1)
    labels, model = separable(rng)
    pair = np.where(rng.random(labels.size) < 0.8, labels, 1 - labels).astype(float)
    lines = comparison_sentences(
        report_of(labels, {"model": model, "dinucleotide": pair}, np.arange(labels.size) // 3)
    )
    found = [line for line in lines if "the dinucleotide at the site alone ranks errors above chance" in line]
    assert len(found) == 1 and "sequence content" in found[0] and "shape" not in found[0]


def test_fn_vs_decoy_tn_says_in_the_log_that_beating_the_matched_baselines_is_true_by_construction():
    rng = np.random.default_rng(3)
    labels, model = separable(rng)
    scores = {"model": model, "dinucleotide": rng.normal(size=labels.size)}
    genes = np.arange(labels.size) // 3
    assert not any("by design" in line for line in comparison_sentences(report_of(labels, scores, genes)))
    matched = {"base_score": "each decoy TN ...", "dinucleotide": "every decoy TN carries ..."}
    lines = comparison_sentences(report_of(labels, scores, genes, matched=matched))
    at = lines.index(
        "by design, the decoy TN are matched to the FN scores (make_calls, calling.negatives decoy), "
        "so beating base_score and dinucleotide is true by construction:"
    )
    assert lines[at + 1 : at + 3] == [
        "  base_score: each decoy TN ...",
        "  dinucleotide: every decoy TN carries ...",
    ]
