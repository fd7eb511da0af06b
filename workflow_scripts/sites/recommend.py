"""Which predictor's calls to use on this genome, by the out-of-fold evidence in site_metrics.json.

Over the whole region (site_metrics.json's `whole_region`: every call in the scored regions counts,
sites/whole_region.py), a re-scorer qualifies only when its F1 gain over the base model's
re-tuned threshold has a 95% block-bootstrap interval above 0 (verdict "better") and it is not
worse on genes (the in-gene gene-cluster interval not below 0): the tree and errorseq's model
against `base_tuned`, the transferred ones against `transfer_base_tuned` (the source genome's
thresholds, what a genome without an annotation would have). The base's calls are `base_tuned`
where re-tuning beats `base_threshold` over the whole region and is not worse on genes, else
`base_threshold`; among them
and the qualified re-scorers the highest whole-region F1 wins. So where no re-scorer beats the
re-tuned base over the whole region, the corrected calls are the base's, never worse than it.
A report without `whole_region` (written before it) is read from its in-gene figures.
"""

from __future__ import annotations

from workflow_scripts.sites.predictors import BASE_THRESHOLD, BASE_TUNED, RESCORERS

WHOLE_REGION, IN_GENES = "whole region", "in genes"


def overall_gain(differences: dict, first: str, second: str) -> dict | None:
    pair = differences.get(f"{first} - {second}")
    return None if pair is None else pair["overall"]["f1"]


def shown(gain: dict | None) -> str:
    return "undefined" if gain is None or gain["estimate"] is None else f"{gain['estimate']:+.3f}"


def base_calls(differences: dict, on_genes: dict) -> str:
    """base_tuned where re-tuning beats the threshold over the whole region and is not worse on
    genes, else base_threshold."""
    gain = overall_gain(differences, BASE_TUNED, BASE_THRESHOLD)
    genes = overall_gain(on_genes, BASE_TUNED, BASE_THRESHOLD)
    better = gain is not None and gain["verdict"] == "better"
    return BASE_TUNED if better and (genes is None or genes["verdict"] != "worse") else BASE_THRESHOLD


def recommend(report: dict) -> dict:
    """{"predictor", "f1" (whole-region), "basis", "why", "passed_over": {re-scorer: why not}}."""
    whole = report.get("whole_region")
    basis = WHOLE_REGION if whole else IN_GENES
    calls = (whole or report)["calls"]
    differences = (whole or report)["differences"]
    base = base_calls(differences, report["differences"]) if whole else BASE_TUNED
    chosen, passed_over = {base: calls[base]["overall"]["f1"]}, {}
    for name, reference in RESCORERS.items():
        if name not in calls:
            continue
        gain = overall_gain(differences, name, reference)
        on_genes = overall_gain(report["differences"], name, reference)
        f1 = calls[name]["overall"]["f1"]
        if gain is None or gain["verdict"] != "better" or f1 is None:
            passed_over[name] = (
                f"its gain over {reference} {basis} ({shown(gain)} F1) is not above 0 with 95% confidence"
            )
        elif on_genes is not None and on_genes["verdict"] == "worse":
            passed_over[name] = f"it is worse than {reference} on genes ({shown(on_genes)} F1)"
        else:
            chosen[name] = f1
    best = max(chosen, key=lambda name: -1.0 if chosen[name] is None else chosen[name])
    if report.get("bootstrap", {}).get("replicates") == 0:
        why = "no intervals (sites.bootstrap_replicates is 0), so no re-scorer is shown to beat the base"
    elif best in (BASE_TUNED, BASE_THRESHOLD):
        why = (
            f"no re-scorer beats the base model's re-tuned threshold {basis}: the corrected calls are "
            f"the base's ({best})"
        )
    else:
        why = (
            f"the highest F1 {basis} of the re-scorers that beat their re-tuned threshold ({RESCORERS[best]})"
        )
    return {"predictor": best, "f1": chosen[best], "basis": basis, "why": why, "passed_over": passed_over}


def recommendation_sentence(choice: dict) -> str:
    f1 = "undefined" if choice["f1"] is None else f"{choice['f1']:.3f}"
    basis = choice.get("basis", IN_GENES)
    return f" Use the {choice['predictor']} calls on this genome (F1 {f1} {basis}): {choice['why']}."
