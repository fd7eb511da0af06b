"""The predictor site_calls recommends: the best whole-region F1 among the base's calls and the
re-scorers whose gain over their re-tuned threshold over the whole region is above 0 with 95%
confidence (and not worse on genes); rescore_sites takes it only where it was made over whole
regions."""

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


def test_a_genome_without_annotation_takes_the_source_recommendation_made_over_whole_regions():
    """rescore_sites: the source's own out-of-fold choice carried over to the transfer names,
    where it was made over whole regions."""
    from workflow_scripts.sites.rescore import corrected_predictor

    assert corrected_predictor(True, "base_tuned", whole_region=True) == "transfer_base_tuned"
    assert corrected_predictor(True, "tree", whole_region=True) == "transfer_tree"
    assert corrected_predictor(True, "errorseq", whole_region=True) == "transfer_errorseq"
    assert corrected_predictor(False, "errorseq", whole_region=True) == "base_threshold"  # no deep models
    assert corrected_predictor(True, "base_threshold", whole_region=True) == "base_threshold"
    assert corrected_predictor(True, None, whole_region=True) == "base_threshold"


def test_a_rescorer_without_whole_region_evidence_gives_the_base_calls():
    """Issue 49: a re-scorer whose recommendation was made on genes only (every shipped one
    before it) picked its tree, worse than the base over the whole region; now the base's calls,
    and the reason says so. Fails on the old code (it took the tree)."""
    from workflow_scripts.sites.rescore import corrected_choice

    in_genes = {"recommended": {"predictor": "tree"}}  # written before whole_region
    predictor, why = corrected_choice(True, in_genes)
    assert predictor == "base_threshold" and "no whole-region evidence" in why
    genes_only = {
        "whole_region": {"scored": "gene spans"},
        "recommended": {"predictor": "tree", "basis": "whole region"},
    }
    assert corrected_choice(True, genes_only)[0] == "base_threshold"
    scanned = {
        "whole_region": {"scored": "regions"},
        "recommended": {"predictor": "errorseq", "basis": "whole region"},
    }
    assert corrected_choice(True, scanned)[0] == "transfer_errorseq"


def whole(report_calls: dict, differences: dict) -> dict:
    return {"scored": "regions", "calls": report_calls, "differences": differences}


def test_the_recommendation_goes_by_the_whole_region():
    """A tree that beats the re-tuned threshold on genes but not over the whole region (the
    issue's A. arenosa case: +0.000 on genes, -0.030 whole-region) is not recommended; the base's
    calls are. Fails on the old code, which read only the in-gene differences."""
    report = {
        "calls": calls(base_threshold=0.90, base_tuned=0.91, tree=0.93),
        "differences": {
            "tree - base_tuned": gain(0.02, "better"),
            "base_tuned - base_threshold": gain(0.01, "better"),
        },
        "whole_region": whole(
            calls(base_threshold=0.863, base_tuned=0.860, tree=0.839),
            {
                "tree - base_tuned": gain(-0.021, "worse"),
                "base_tuned - base_threshold": gain(-0.003, "not better"),
            },
        ),
    }
    choice = recommend(report)
    assert choice["predictor"] == "base_threshold" and choice["basis"] == "whole region"
    assert choice["f1"] == 0.863 and "tree" in choice["passed_over"]


def test_a_rescorer_better_over_the_whole_region_but_worse_on_genes_is_not_chosen():
    report = {
        "calls": calls(base_threshold=0.90, base_tuned=0.91, errorseq=0.89),
        "differences": {
            "errorseq - base_tuned": gain(-0.02, "worse"),
            "base_tuned - base_threshold": gain(0.01, "better"),
        },
        "whole_region": whole(
            calls(base_threshold=0.86, base_tuned=0.87, errorseq=0.88),
            {
                "errorseq - base_tuned": gain(0.01, "better"),
                "base_tuned - base_threshold": gain(0.01, "better"),
            },
        ),
    }
    choice = recommend(report)
    assert choice["predictor"] == "base_tuned" and "on genes" in choice["passed_over"]["errorseq"]


def test_a_rescorer_better_over_the_whole_region_is_chosen():
    report = {
        "calls": calls(base_threshold=0.90, base_tuned=0.91, errorseq=0.92),
        "differences": {"errorseq - base_tuned": gain(0.01, "not better")},
        "whole_region": whole(
            calls(base_threshold=0.863, base_tuned=0.866, errorseq=0.876),
            {
                "errorseq - base_tuned": gain(0.010, "better"),
                "base_tuned - base_threshold": gain(0.003, "not better"),
            },
        ),
    }
    choice = recommend(report)
    assert choice["predictor"] == "errorseq" and choice["f1"] == 0.876
    assert "(F1 0.876 whole region)" in recommendation_sentence(choice)


def test_re_tuning_better_over_the_whole_region_but_worse_on_genes_keeps_the_threshold():
    """A. arenosa chr2 9-12 Mb scanned whole: re-tuning +0.030 over the whole region, -0.009 on
    genes; the base's calls are then its own at 0.5."""
    report = {
        "calls": calls(base_threshold=0.908, base_tuned=0.899, tree=0.900),
        "differences": {
            "tree - base_tuned": gain(0.001, "not better"),
            "base_tuned - base_threshold": gain(-0.009, "worse"),
        },
        "whole_region": whole(
            calls(base_threshold=0.825, base_tuned=0.855, tree=0.859),
            {
                "tree - base_tuned": gain(0.004, "not better"),
                "base_tuned - base_threshold": gain(0.030, "better"),
            },
        ),
    }
    assert recommend(report)["predictor"] == "base_threshold"
