"""The predictor site_calls recommends: the best F1 among the re-tuned base and the re-scorers
whose gain over their re-tuned threshold is above 0 with 95% confidence."""

from __future__ import annotations

from workflow_scripts.sites.recommend import recommend, recommendation_sentence


def calls(**f1):
    return {name: {"overall": {"f1": value}} for name, value in f1.items()}


def gain(estimate, verdict):
    low = estimate - 0.01 if estimate is not None else None
    return {"overall": {"f1": {"estimate": estimate, "low": low, "high": None, "verdict": verdict}}}


def test_a_rescorer_that_beats_its_threshold_is_chosen():
    report = {
        "calls": calls(base_tuned=0.71, tree=0.76, errorseq=0.82),
        "differences": {
            "tree - base_tuned": gain(0.05, "better"),
            "errorseq - base_tuned": gain(0.11, "better"),
        },
    }
    assert recommend(report)["predictor"] == "errorseq"


def test_no_rescorer_above_the_base_gives_the_base_calls():
    """A higher F1 whose interval holds 0 does not win: the base's calls are the track."""
    report = {
        "calls": calls(base_tuned=0.939, tree=0.941, transfer_tree=0.95, transfer_base_tuned=0.93),
        "differences": {
            "tree - base_tuned": gain(0.002, "not better"),
            "transfer_tree - transfer_base_tuned": gain(0.02, "not better"),
        },
    }
    choice = recommend(report)
    assert choice["predictor"] == "base_tuned" and set(choice["passed_over"]) == {"tree", "transfer_tree"}
    assert "the corrected calls are the base's" in recommendation_sentence(choice)


def test_a_transferred_rescorer_competes_on_f1():
    report = {
        "calls": calls(base_tuned=0.90, tree=0.91, transfer_tree=0.95, transfer_base_tuned=0.93),
        "differences": {
            "tree - base_tuned": gain(0.01, "better"),
            "transfer_tree - transfer_base_tuned": gain(0.02, "better"),
        },
    }
    assert recommend(report)["predictor"] == "transfer_tree"


def test_without_intervals_the_base_is_kept_and_the_reason_says_so():
    report = {
        "calls": calls(base_tuned=0.71, tree=0.76),
        "differences": {"tree - base_tuned": gain(0.05, "not better")},
        "bootstrap": {"replicates": 0},
    }
    choice = recommend(report)
    assert choice["predictor"] == "base_tuned" and "no intervals" in choice["why"]


def test_a_genome_without_annotation_takes_the_source_recommendation():
    """rescore_sites: the source's own out-of-fold choice carried over to the transfer names."""
    from workflow_scripts.sites.rescore import corrected_predictor

    assert corrected_predictor(True, "base_tuned") == "transfer_base_tuned"
    assert corrected_predictor(True, "tree") == "transfer_tree"
    assert corrected_predictor(False, "errorseq") == "transfer_tree"  # no deep models shipped
    assert corrected_predictor(True, None) == "transfer_errorseq"
