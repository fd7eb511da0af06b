"""The answer site_calls' log ends with, from site_metrics.json: does the tree (and errorseq's
model, with sites.model) improve on the base model's calls on held-out genes, by how much, how
sure; against the k-mer baseline, and with sites.transfer what the other genome's tree does here.
"""

from __future__ import annotations

from workflow_scripts.sites.predictors import (
    BASE_THRESHOLD,
    BASE_TUNED,
    ERRORSEQ,
    KMER,
    TRANSFER_BASE_TUNED,
    TRANSFER_ERRORSEQ,
    TRANSFER_TREE,
    TREE,
)


def verdict_phrase(difference: dict, reference: str) -> str:
    """'improves on <reference> by +0.037 F1 [+0.027, +0.047]', or does not, or is worse."""
    shown = f"{difference['estimate']:+.3f} F1"
    if difference["low"] is None:
        return f"differs from {reference} by {shown} (no interval: {difference['reason']})"
    interval = f"[{difference['low']:+.3f}, {difference['high']:+.3f}]"
    if difference["verdict"] == "better":
        return f"improves on {reference} by {shown} {interval}"
    if difference["verdict"] == "worse":
        return f"is worse than {reference} by {shown} {interval}"
    return f"does not improve on {reference}: {shown} {interval}, an interval that holds 0"


def answer(report: dict) -> str:
    """Does the tree (and errorseq's model, with sites.model) improve on the base model's calls on
    held-out genes, by how much, how sure."""
    calls, counts, settings = report["calls"], report["counts"], report["settings"]
    names = (
        (ERRORSEQ, TREE, BASE_TUNED, BASE_THRESHOLD)
        if ERRORSEQ in calls
        else (TREE, BASE_TUNED, BASE_THRESHOLD)
    )
    f1 = {name: calls[name]["overall"]["f1"] for name in names}
    if any(value is None for value in f1.values()):
        return "site_calls: F1 is undefined for a predictor (no annotated site, or no call): no answer"
    differences = report["differences"]

    def gain(first: str, second: str):
        return differences[f"{first} - {second}"]["overall"]["f1"]

    own_threshold = f"the threshold {settings['threshold']}"
    lead, deep_verdicts = f"the tree's calls reach F1 {f1[TREE]:.3f}", ""
    if ERRORSEQ in calls:
        lead = f"errorseq's model's calls reach F1 {f1[ERRORSEQ]:.3f}, the tree's {f1[TREE]:.3f}"
        deep_verdicts = (
            f"errorseq's model {verdict_phrase(gain(ERRORSEQ, TREE), 'the tree')}; it "
            f"{verdict_phrase(gain(ERRORSEQ, BASE_TUNED), 'the re-tuned threshold')}; "
        )
    return (
        f"site_calls: on held-out genes ({settings['folds']} folds over {counts['gene_clusters']:,} gene "
        f"clusters, {counts['sites']:,} annotated sites) {lead}, the base "
        f"model's {f1[BASE_TUNED]:.3f} with its threshold re-tuned per splice type and "
        f"{f1[BASE_THRESHOLD]:.3f} at {settings['threshold']}: {deep_verdicts}the tree "
        f"{verdict_phrase(gain(TREE, BASE_TUNED), 'the re-tuned threshold')}; re-tuning "
        f"{verdict_phrase(gain(BASE_TUNED, BASE_THRESHOLD), own_threshold)}{kmer_clause(report, gain)} "
        f"{interval_note(report['bootstrap']['replicates'])}"
        f"{transfer_sentence(report, gain)}{few_clusters_note(counts['gene_clusters'], report['bootstrap'])}"
    )


def interval_note(replicates: int) -> str:
    if replicates == 0:
        return "(no intervals: sites.bootstrap_replicates is 0)"
    return f"(95% gene-cluster bootstrap intervals, {replicates:,} replicates)"


def kmer_clause(report: dict, gain) -> str:
    """The k-mer baseline (sequence alone): its F1, against the re-tuned threshold, and whether
    the tree (and errorseq's model) beat it."""
    calls = report["calls"]
    if KMER not in calls:
        return ""
    f1 = calls[KMER]["overall"]["f1"]
    if f1 is None:
        return "; the k-mer baseline's F1 is undefined (no call)"
    deep = f", errorseq's model {verdict_phrase(gain(ERRORSEQ, KMER), 'it')}" if ERRORSEQ in calls else ""
    return (
        f"; a k-mer model on the sequence alone reaches F1 {f1:.3f} and "
        f"{verdict_phrase(gain(KMER, BASE_TUNED), 'the re-tuned threshold')}: the tree "
        f"{verdict_phrase(gain(TREE, KMER), 'it')}{deep}"
    )


def transfer_sentence(report: dict, gain) -> str:
    """sites.transfer: what the other genome's tree and thresholds do here, applied unchanged."""
    calls = report["calls"]
    if TRANSFER_TREE not in calls:
        return ""
    source = report["transfer"]["source"]
    f1 = {name: calls[name]["overall"]["f1"] for name in (TRANSFER_TREE, TRANSFER_BASE_TUNED)}
    if any(value is None for value in f1.values()):
        return "; the transferred predictors' F1 is undefined (no call)"
    return (
        f"; transferred unchanged from {source} ({report['transfer']['source_sites']:,} sites), its tree "
        f"reaches F1 {f1[TRANSFER_TREE]:.3f} and its thresholds {f1[TRANSFER_BASE_TUNED]:.3f}: the "
        f"transferred tree {verdict_phrase(gain(TRANSFER_TREE, TRANSFER_BASE_TUNED), 'the transferred thresholds')}"
        f", and this genome's own tree {verdict_phrase(gain(TREE, TRANSFER_TREE), 'the transferred tree')}"
        f"{transfer_deep_clause(calls, gain)}"
    )


def transfer_deep_clause(calls: dict, gain) -> str:
    """The source's deep models, when its rescorer.pkl carries them."""
    if TRANSFER_ERRORSEQ not in calls:
        return ""
    f1 = calls[TRANSFER_ERRORSEQ]["overall"]["f1"]
    if f1 is None:
        return "; the transferred deep models' F1 is undefined (no call)"
    return (
        f"; the mean of its deep models reaches F1 {f1:.3f}, "
        f"{verdict_phrase(gain(TRANSFER_ERRORSEQ, TRANSFER_TREE), 'the transferred tree')} and "
        f"{verdict_phrase(gain(TRANSFER_ERRORSEQ, TRANSFER_BASE_TUNED), 'the transferred thresholds')}"
    )


FEW_CLUSTERS = 30  # below this, a cluster bootstrap's percentile interval is rough


def few_clusters_note(clusters: int, bootstrap: dict) -> str:
    if clusters >= FEW_CLUSTERS or bootstrap["replicates"] == 0:
        return ""
    return f"; only {clusters} gene clusters: read the intervals as rough, not as evidence"
