"""What site_calls writes: the corrected-calls table, BED tracks of the calls, and the answer.

corrected_calls.parquet: one row per candidate and one per missed annotated site (no candidate
within ±w: `is_candidate` false, never called), in genome order. BED (6 columns, 0-based start,
a `track` line; IGV and the UCSC browser load it): one line per called candidate, named
`<splice_type>:annotated` or `<splice_type>:new` (no annotated site within ±w), its score the
predictor's probability × 1000.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from workflow_scripts.calling.contract import GENE_CLUSTER
from workflow_scripts.calling.scores import POSITION_BITS
from workflow_scripts.sites.candidates import Candidates
from workflow_scripts.sites.predictors import (
    BASE_THRESHOLD,
    BASE_TUNED,
    ERRORSEQ,
    TRANSFER_BASE_TUNED,
    TRANSFER_ERRORSEQ,
    TRANSFER_TREE,
    TREE,
    OutOfFold,
    per_candidate,
)

CALL_COLUMNS = {
    name: f"call_{name}"
    for name in (
        BASE_THRESHOLD,
        BASE_TUNED,
        TREE,
        ERRORSEQ,
        TRANSFER_BASE_TUNED,
        TRANSFER_TREE,
        TRANSFER_ERRORSEQ,
    )
}
TABLE_COLUMNS = (
    "chrom",
    "position",
    "strand",
    "splice_type",
    "gene_id",
    GENE_CLUSTER,
    "fold",
    "is_candidate",
    "base_score",
    "tree_probability",
    "is_true_site",
    *(CALL_COLUMNS[name] for name in (BASE_THRESHOLD, BASE_TUNED, TREE)),
    "base_tuned_threshold",
    "tree_threshold",
)
# sites.model adds errorseq's probability, call and threshold at the end
ERRORSEQ_COLUMNS = ("errorseq_probability", CALL_COLUMNS[ERRORSEQ], "errorseq_threshold")
# sites.transfer adds the source genome's tree probability, and both transferred predictors
TRANSFER_COLUMNS = (
    "transfer_probability",
    CALL_COLUMNS[TRANSFER_BASE_TUNED],
    CALL_COLUMNS[TRANSFER_TREE],
    "transfer_base_tuned_threshold",
    "transfer_tree_threshold",
)
# and when the source genome ran sites.model, its deep models' probability, call and threshold
TRANSFER_ERRORSEQ_COLUMNS = (
    "transfer_errorseq_probability",
    CALL_COLUMNS[TRANSFER_ERRORSEQ],
    "transfer_errorseq_threshold",
)
THRESHOLD_COLUMNS = {
    BASE_TUNED: "base_tuned_threshold",
    TREE: "tree_threshold",
    ERRORSEQ: "errorseq_threshold",
    TRANSFER_BASE_TUNED: "transfer_base_tuned_threshold",
    TRANSFER_TREE: "transfer_tree_threshold",
    TRANSFER_ERRORSEQ: "transfer_errorseq_threshold",
}
OPTIONAL_PROBABILITIES = ("errorseq_probability", "transfer_probability", "transfer_errorseq_probability")
PROBABILITY_COLUMNS = ("tree_probability", *OPTIONAL_PROBABILITIES)


def table_columns(predictions: OutOfFold) -> tuple[str, ...]:
    columns = TABLE_COLUMNS + (ERRORSEQ_COLUMNS if predictions.errorseq_probability is not None else ())
    columns += TRANSFER_COLUMNS if predictions.transfer_probability is not None else ()
    return columns + (
        TRANSFER_ERRORSEQ_COLUMNS if predictions.transfer_errorseq_probability is not None else ()
    )


def with_thresholds(frame: pl.DataFrame, predictions: OutOfFold) -> pl.DataFrame:
    folds, types = frame["fold"].to_numpy(), frame["splice_type"].to_numpy()
    return frame.with_columns(
        pl.Series(THRESHOLD_COLUMNS[name], per_candidate(thresholds, folds, types))
        for name, thresholds in predictions.thresholds.items()
    )


def candidate_rows(found: Candidates, predictions: OutOfFold) -> pl.DataFrame:
    calls = [pl.Series(CALL_COLUMNS[name], called) for name, called in predictions.calls.items()]
    for name in OPTIONAL_PROBABILITIES:
        if getattr(predictions, name) is not None:
            calls.append(pl.Series(name, getattr(predictions, name), dtype=pl.Float32))
    return found.table.with_columns(
        *calls,
        pl.Series("tree_probability", predictions.tree_probability, dtype=pl.Float32),
        is_candidate=pl.lit(True),
    )


def missed_site_rows(found: Candidates, predictions: OutOfFold) -> pl.DataFrame:
    missed = found.sites.filter(pl.Series(found.missed))
    return missed.with_columns(
        *(pl.lit(False).alias(CALL_COLUMNS[name]) for name in predictions.calls),
        *(pl.lit(None, dtype=pl.Float32).alias(name) for name in PROBABILITY_COLUMNS),
        is_candidate=pl.lit(False),
        is_true_site=pl.lit(True),
    )


def corrected_calls(found: Candidates, predictions: OutOfFold) -> pl.DataFrame:
    parts = [candidate_rows(found, predictions), missed_site_rows(found, predictions)]
    rows = with_thresholds(pl.concat(parts, how="diagonal_relaxed"), predictions)
    chrom_order = (pl.col("key") // (1 << (POSITION_BITS + 1))).alias("chrom_order")  # genome order
    return rows.sort(chrom_order, "position", "strand", "splice_type").select(table_columns(predictions))


def bed_text(table: pl.DataFrame, predictor: str, score_column: str, description: str) -> str:
    """A BED6 track of the candidates `predictor` calls, scored by `score_column`."""
    called = table.filter(pl.col(CALL_COLUMNS[predictor]))
    header = f'track name="{predictor}" description="{description}" useScore=1\n'
    scores = np.clip(np.rint(called[score_column].to_numpy().astype(float) * 1000), 0, 1000).astype(int)
    names = [
        f"{t}:{'annotated' if true else 'new'}"
        for t, true in zip(called["splice_type"], called["is_true_site"])
    ]
    lines = [
        f"{chrom}\t{position - 1}\t{position}\t{name}\t{score}\t{strand}\n"
        for chrom, position, strand, name, score in zip(
            called["chrom"], called["position"], called["strand"], names, scores
        )
    ]
    return header + "".join(lines)


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
        f"{verdict_phrase(gain(BASE_TUNED, BASE_THRESHOLD), own_threshold)} "
        f"(95% gene-cluster bootstrap intervals, {report['bootstrap']['replicates']:,} replicates)"
        f"{transfer_sentence(report, gain)}{few_clusters_note(counts['gene_clusters'])}"
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
        f"; its deep models reach F1 {f1:.3f}: they "
        f"{verdict_phrase(gain(TRANSFER_ERRORSEQ, TRANSFER_TREE), 'the transferred tree')} and "
        f"{verdict_phrase(gain(TRANSFER_ERRORSEQ, TRANSFER_BASE_TUNED), 'the transferred thresholds')}"
    )


FEW_CLUSTERS = 30  # below this, a cluster bootstrap's percentile interval is rough


def few_clusters_note(clusters: int) -> str:
    if clusters >= FEW_CLUSTERS:
        return ""
    return f"; only {clusters} gene clusters: read the intervals as rough, not as evidence"
