"""Which predictor's calls to use on this genome, by the out-of-fold evidence in site_metrics.json.

A re-scorer qualifies only when its F1 gain over the base model's re-tuned threshold has a 95%
interval above 0 (verdict "better"): the tree and errorseq's model against `base_tuned`, the
transferred ones against `transfer_base_tuned` (the source genome's thresholds, what a genome
without an annotation would have). Among `base_tuned` and the qualified re-scorers the highest
F1 wins; so where no re-scorer beats the re-tuned base, the corrected calls are the base's.
"""

from __future__ import annotations

from workflow_scripts.sites.predictors import (
    BASE_TUNED,
    ERRORSEQ,
    TRANSFER_BASE_TUNED,
    TRANSFER_ERRORSEQ,
    TRANSFER_TREE,
    TREE,
)

RESCORERS = {  # re-scorer -> the threshold it must beat
    ERRORSEQ: BASE_TUNED,
    TREE: BASE_TUNED,
    TRANSFER_ERRORSEQ: TRANSFER_BASE_TUNED,
    TRANSFER_TREE: TRANSFER_BASE_TUNED,
}


def recommend(report: dict) -> dict:
    """{"predictor", "f1", "why", "passed_over": {re-scorer: why not}} from a site report."""
    calls, differences = report["calls"], report["differences"]
    chosen, passed_over = {BASE_TUNED: calls[BASE_TUNED]["overall"]["f1"]}, {}
    for name, reference in RESCORERS.items():
        if name not in calls:
            continue
        gain = differences[f"{name} - {reference}"]["overall"]["f1"]
        f1 = calls[name]["overall"]["f1"]
        if gain["verdict"] == "better" and f1 is not None:
            chosen[name] = f1
        else:
            shown = "undefined" if gain["estimate"] is None else f"{gain['estimate']:+.3f}"
            passed_over[name] = f"its gain over {reference} ({shown} F1) is not above 0 with 95% confidence"
    best = max(chosen, key=lambda name: -1.0 if chosen[name] is None else chosen[name])
    if report.get("bootstrap", {}).get("replicates") == 0:
        why = "no intervals (sites.bootstrap_replicates is 0), so no re-scorer is shown to beat the base"
    elif best == BASE_TUNED:
        why = (
            "no re-scorer beats the base model's re-tuned threshold here: the corrected calls are the base's"
        )
    else:
        why = f"the highest F1 of the re-scorers that beat their re-tuned threshold ({RESCORERS[best]})"
    return {"predictor": best, "f1": chosen[best], "why": why, "passed_over": passed_over}


def recommendation_sentence(choice: dict) -> str:
    f1 = "undefined" if choice["f1"] is None else f"{choice['f1']:.3f}"
    return f" Use the {choice['predictor']} calls on this genome (F1 {f1}): {choice['why']}."
