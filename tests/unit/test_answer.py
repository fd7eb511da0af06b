"""The answer first: one sentence per run from a known comparison, exactly as the reader gets it."""

from workflow_scripts.comparison_fields import verdict_of
from workflow_scripts.evaluation.answer import answer_sentence, spread_sentence


def estimate(value, low, high):
    return {"estimate": value, "low": low, "high": high, "reason": None}


def difference(value, low, high):
    return {**estimate(value, low, high), "verdict": verdict_of(low, high)}


def metrics_of(differences: dict, model=(0.912, 0.881, 0.944), skipped=None) -> dict:
    """A metrics.json with only what the sentence reads: ROC-AUC differences (PR-AUC alike)."""
    pairs = {name: {"roc_auc": difference(*d), "pr_auc": difference(*d)} for name, d in differences.items()}
    predictors = {name: {"roc_auc": estimate(0.6, 0.55, 0.65)} for name in differences}
    overall = {"predictors": {"model": {"roc_auc": estimate(*model)}, **predictors}, "differences": pairs}
    return {"experiment": "fp_vs_tp", "comparison": {"overall": overall, "skipped": skipped or {}}}


def test_beaten_and_not_beaten_baselines_with_their_intervals():
    metrics = metrics_of(
        {
            "base_score": (0.081, 0.043, 0.112),
            "kmer": (-0.012, -0.051, 0.027),
            "chance": (0.412, 0.381, 0.444),
            "length": (0.30, 0.25, 0.35),
            "dinucleotide": (0.20, 0.15, 0.25),
        }
    )
    assert answer_sentence(metrics) == (
        "fp_vs_tp (ROC-AUC 0.91 [0.88, 0.94]): the model beats the base model's score by "
        "+0.08 [0.04, 0.11] ROC-AUC; it does not beat the k-mer model (-0.01 [-0.05, 0.03]); "
        "it also beats chance, window length alone and the site dinucleotide alone."
    )


def test_a_leak_detector_not_beaten_is_named_with_its_numbers_and_worse_is_said():
    metrics = metrics_of(
        {
            "kmer": (-0.10, -0.15, -0.05),
            "chance": (0.30, 0.20, 0.40),
            "length": (0.004, -0.002, 0.01),
        },
        skipped={"base_score": "the windows have no 'score' column"},
    )
    assert answer_sentence(metrics) == (
        "fp_vs_tp (ROC-AUC 0.91 [0.88, 0.94]): the model does not beat window length alone "
        "(+0.00 [0.00, 0.01]); it is worse than the k-mer model (-0.10 [-0.15, -0.05]); it also beats "
        "chance; the base model's score: not scored, the windows have no 'score' column."
    )


def test_one_class_in_the_test_windows_is_no_answer():
    metrics = metrics_of({"kmer": (None, None, None)}, model=(None, None, None))
    metrics["comparison"]["overall"]["predictors"]["model"]["roc_auc"]["reason"] = "one class only"
    assert answer_sentence(metrics) == "fp_vs_tp (ROC-AUC undefined): no answer, one class only."


def test_an_experiment_over_several_runs_is_mean_and_sd():
    mean = {"experiment": "fp_vs_tp", "runs": 3, "model_roc_auc": 0.9, "model_minus_base_score_roc_auc": 0.05}
    mean["model_minus_kmer_roc_auc"] = None
    sd = {"model_roc_auc": 0.01, "model_minus_base_score_roc_auc": 0.02, "model_minus_kmer_roc_auc": None}
    assert spread_sentence(mean, sd) == (
        "fp_vs_tp: 3 runs, mean ± sd: model ROC-AUC 0.900 ± 0.010, model - base_score 0.050 ± 0.020, "
        "model - base_score_type not scored, model - score_profile_tree not scored, model - kmer not scored"
    )


def test_the_profile_trees_are_named_and_fn_vs_decoy_tn_says_the_base_score_is_matched_by_design():
    metrics = metrics_of(
        {
            "base_score": (0.30, 0.25, 0.35),
            "score_profile_tree": (-0.05, -0.09, -0.01),
            "kmer": (0.1, 0.05, 0.15),
        }
    )
    metrics["experiment"] = "fn_vs_tn"
    metrics["comparison"]["matched_by_design"] = {"base_score": "matched"}
    assert answer_sentence(metrics) == (
        "fn_vs_tn (ROC-AUC 0.91 [0.88, 0.94]): the model beats the base model's score by +0.30 [0.25, 0.35] "
        "and the k-mer model by +0.10 [0.05, 0.15] ROC-AUC; it is worse than the trees on the base model's "
        "score profiles (-0.05 [-0.09, -0.01]); by design, the decoy TN are matched to the FN scores "
        "(make_calls, calling.negatives decoy), so beating the base model's score is true by construction."
    )


def test_a_baseline_that_scores_every_window_alike_is_left_out():
    metrics = metrics_of({"kmer": (0.05, 0.01, 0.09), "length": (0.41, 0.38, 0.44)})
    metrics["comparison"]["overall"]["predictors"]["length"] = {"roc_auc": estimate(0.5, 0.5, 0.5)}
    assert answer_sentence(metrics) == (
        "fp_vs_tp (ROC-AUC 0.91 [0.88, 0.94]): the model beats the k-mer model by +0.05 [0.01, 0.09] ROC-AUC."
    )
