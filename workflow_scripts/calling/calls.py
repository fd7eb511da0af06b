"""Annotated sites + base-model scores -> TP/FP/FN/TN calls, per splice type.

A position is *predicted* as a site of a type when its score for that type is >= `threshold`.
With w = `consensus_window`, on the same chromosome, strand and splice type:

* **TP**: an annotated site with a predicted position within ±w nt (one row per site, at the
  annotated position);
* **FN**: an annotated site with no predicted position within ±w;
* **FP**: a predicted position with no annotated site within ±w (one row per position);
* **TN**: sampled from the other scored positions, those with no annotated site and no predicted
  position of either type within ±w, one TN per position (`calling.negatives`, `negatives.py`).

Only annotated sites whose own position was scored are called (the others are counted in the
summary as unscored). Every call keeps `score` (the base model's probability for its splice type
at its position) and `window_score` (the highest within ±w: what made a TP a TP when the
prediction sits beside the site). TP/FN take the site's gene and transcript; FP/TN the smallest
gene_id of the selected genes whose span holds the position on that strand. gene_start/gene_end
are the gene's span from genes.parquet; `dinucleotide` is the intron-side pair (GT/AG when
canonical, see `motifs.py`); `tn_strategy` says how a TN was drawn.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import numpy as np
import polars as pl

from workflow_scripts.calling.contract import CALLS_COLUMNS, GENE_CLUSTER
from workflow_scripts.calling.motifs import as_text, intron_dinucleotides, is_canonical
from workflow_scripts.calling.negatives import (
    how_many,
    ks_distance,
    match_scores,
    sample_random,
    target_scores,
)
from workflow_scripts.calling.scores import POSITION_BITS, SPLICE_TYPES, Scores, decode, encode
from workflow_scripts.config.types import CallingSection
from workflow_scripts.data.genome import Genome


@dataclass(frozen=True)
class CallSettings:
    threshold: float
    consensus_window: int
    negatives: str
    per_error: float
    seed: int

    @classmethod
    def from_config(cls, calling: CallingSection) -> CallSettings:
        negatives = calling.negatives
        return cls(
            calling.threshold,
            calling.consensus_window,
            negatives.kind,
            negatives.per_error,
            negatives.seed,
        )


def near(keys: np.ndarray, targets: np.ndarray, window: int) -> np.ndarray:
    """Whether a (sorted) target lies within ±window of each key."""
    if len(targets) == 0:
        return np.zeros(len(keys), dtype=bool)
    first = np.searchsorted(targets, keys - window, side="left")
    return (first < len(targets)) & (targets[np.minimum(first, len(targets) - 1)] <= keys + window)


def lookup(scores: Scores, keys: np.ndarray, values: np.ndarray) -> np.ndarray:
    """values at keys that are scored positions; nan elsewhere."""
    index = np.minimum(np.searchsorted(scores.keys, keys), len(scores) - 1)
    return np.where(scores.keys[index] == keys, values[index], np.nan)


def window_max(scores: Scores, keys: np.ndarray, values: np.ndarray, window: int) -> np.ndarray:
    best = np.full(len(keys), -np.inf)
    for offset in range(-window, window + 1):
        best = np.fmax(best, lookup(scores, keys + offset, values))
    return best


def dinucleotides(genome: Genome, keys: np.ndarray, splice_type: str) -> np.ndarray:
    """(n, 2) intron-side bases at keys made with genome_groups(genome.names)."""
    group = keys >> POSITION_BITS
    chrom, minus = group >> 1, (group & 1).astype(bool)
    position = keys & ((1 << POSITION_BITS) - 1)
    return intron_dinucleotides(
        genome.sequence,
        genome.offsets[chrom],
        genome.lengths[chrom],
        position,
        minus,
        np.full(len(keys), splice_type == "donor"),
    )


def occupied_positions(scores: Scores, sites: pl.DataFrame, threshold: float) -> np.ndarray:
    """Sorted keys of every annotated site and every predicted position, of either splice type."""
    predicted = [scores.keys[scores.of(t) >= threshold] for t in SPLICE_TYPES]
    return np.unique(np.concatenate([sites["key"].to_numpy(), *predicted]))


def call_one_type(
    scores: Scores,
    sites: pl.DataFrame,
    splice_type: str,
    settings: CallSettings,
    genome: Genome,
    rng: np.random.Generator,
    exclude: tuple[np.ndarray, np.ndarray],
) -> tuple[list[pl.DataFrame], dict]:
    """TP/FN/FP of one splice type and its TN; `exclude` = (occupied positions, TN already drawn)."""
    values = scores.of(splice_type)
    window, threshold = settings.consensus_window, settings.threshold
    typed = sites.filter(pl.col("splice_type") == splice_type).sort("key")
    site_keys = typed["key"].to_numpy()
    predicted = scores.keys[values >= threshold]
    scored = ~np.isnan(lookup(scores, site_keys, values))
    hit = near(site_keys, predicted, window)
    fp_keys = predicted[~near(predicted, site_keys, window)]
    occupied, drawn = exclude
    free = (values < threshold) & ~near(scores.keys, occupied, window) & ~np.isin(scores.keys, drawn)
    fn_rows = typed.filter(pl.Series(scored & ~hit))
    tn_keys, tn_report = sample_negatives(
        scores,
        np.flatnonzero(free),
        lookup(scores, fn_rows["key"].to_numpy(), values),
        splice_type,
        settings,
        genome,
        rng,
    )
    frames = [
        typed.filter(pl.Series(scored & hit))
        .select("key", "gene_id", "transcript_id")
        .with_columns(pred_type=pl.lit("TP")),
        fn_rows.select("key", "gene_id", "transcript_id").with_columns(pred_type=pl.lit("FN")),
        key_frame(fp_keys, "FP"),
        key_frame(tn_keys, "TN", settings.negatives),
    ]
    frames = [f.with_columns(splice_type=pl.lit(splice_type)) for f in frames]
    report = {
        "sites": len(site_keys),
        "unscored_sites": int((~scored).sum()),
        "predicted": len(predicted),
        "tn_candidates": int(free.sum()),
        **tn_report,
    }
    return frames, report


def key_frame(keys: np.ndarray, pred_type: str, strategy: str | None = None) -> pl.DataFrame:
    frame = pl.DataFrame(
        {"key": keys.astype(np.int64), "gene_id": None, "transcript_id": None},
        schema={"key": pl.Int64, "gene_id": pl.String, "transcript_id": pl.String},
    )
    frame = frame.with_columns(pred_type=pl.lit(pred_type))
    return frame.with_columns(tn_strategy=pl.lit(strategy)) if strategy else frame


def sample_negatives(
    scores: Scores,
    free: np.ndarray,
    fn_scores: np.ndarray,
    splice_type: str,
    settings: CallSettings,
    genome: Genome,
    rng,
) -> tuple[np.ndarray, dict]:
    n = how_many(len(fn_scores), settings.per_error, rng)
    values = scores.of(splice_type)
    if settings.negatives == "random":
        chosen = free[sample_random(len(free), n, rng)]
    else:
        canonical = free[is_canonical(dinucleotides(genome, scores.keys[free], splice_type), splice_type)]
        chosen = canonical[match_scores(values[canonical], target_scores(fn_scores, n, rng), rng)]
    chosen = np.sort(chosen)
    return scores.keys[chosen], {"tn_wanted": n, "tn": len(chosen)}


def containing_genes(frame: pl.DataFrame, genes: pl.DataFrame) -> pl.DataFrame:
    """gene_id filled, where null, with the smallest gene_id whose span holds the position (same strand)."""
    missing = frame.filter(pl.col("gene_id").is_null()).select("row", "chrom", "strand", "position")
    found = []
    for (chrom, strand), part in missing.group_by("chrom", "strand"):
        spans = genes.filter((pl.col("chrom") == chrom) & (pl.col("strand") == strand)).select(
            "gene_id", "start", "end"
        )
        pairs = part.join_where(
            spans, pl.col("position") >= pl.col("start"), pl.col("position") <= pl.col("end")
        )
        found.append(pairs.group_by("row").agg(pl.col("gene_id").min().alias("inside_gene")))
    if not found:
        return frame
    inside = pl.concat(found)
    return (
        frame.join(inside, on="row", how="left")
        .with_columns(pl.coalesce("gene_id", "inside_gene").alias("gene_id"))
        .drop("inside_gene")
    )


def describe_calls(calls: pl.DataFrame, scores: Scores, genome: Genome, window: int) -> pl.DataFrame:
    """Add chrom/strand/position, score, window_score and dinucleotide to rows keyed by `key`."""
    parts = []
    for splice_type in SPLICE_TYPES:
        part = calls.filter(pl.col("splice_type") == splice_type)
        keys, values = part["key"].to_numpy(), scores.of(splice_type)
        parts.append(
            part.with_columns(
                pl.Series("score", lookup(scores, keys, values), dtype=pl.Float32),
                pl.Series("window_score", window_max(scores, keys, values, window), dtype=pl.Float32),
                pl.Series("dinucleotide", as_text(dinucleotides(genome, keys, splice_type)), dtype=pl.String),
            )
        )
    described = pl.concat(parts)
    return pl.concat([described, decode(described["key"].to_numpy(), scores.groups)], how="horizontal")


def make_calls(
    scores: Scores, sites: pl.DataFrame, genes: pl.DataFrame, genome: Genome, settings: CallSettings
) -> tuple[pl.DataFrame, dict]:
    """Calls from every chromosome's scores in one Scores (the rule reads them chromosome by
    chromosome: make_calls_by_chromosome)."""
    return make_calls_by_chromosome(split_by_chromosome(scores, genome), sites, genes, genome, settings)


def split_by_chromosome(scores: Scores, genome: Genome) -> Iterator[tuple[str, Scores]]:
    """Views of one chromosome's positions each (keys are sorted by chromosome, then strand)."""
    chrom_of_key = scores.keys >> (POSITION_BITS + 1)
    for index in np.unique(chrom_of_key):
        part = slice(*np.searchsorted(chrom_of_key, [index, index + 1]))
        yield (
            genome.names[index],
            Scores(scores.keys[part], scores.donor[part], scores.acceptor[part], scores.groups),
        )


def make_calls_by_chromosome(
    parts: Iterable[tuple[str, Scores]],
    sites: pl.DataFrame,
    genes: pl.DataFrame,
    genome: Genome,
    settings: CallSettings,
) -> tuple[pl.DataFrame, dict]:
    """Each chromosome called on its own, so memory follows the largest chromosome, not the
    genome; its TN are drawn with a generator seeded by (seed, chromosome index), so a
    chromosome's calls do not depend on which other chromosomes are scored."""
    tables: list[pl.DataFrame] = []
    reports: dict[str, Counter] = {t: Counter() for t in SPLICE_TYPES}
    for chrom, scores in parts:
        rng = np.random.default_rng([settings.seed, genome.index_of[chrom]])
        on_chrom = pl.col("chrom") == chrom
        calls, chrom_reports = call_chromosome(
            scores, sites.filter(on_chrom), genes.filter(on_chrom), genome, settings, rng
        )
        tables.append(calls)
        for splice_type, report in chrom_reports.items():
            reports[splice_type].update(report)
    calls = pl.concat(tables).sort("chrom", "position", "strand", "splice_type")
    return calls, summarise(calls, {t: dict(r) for t, r in reports.items()}, settings)


def call_chromosome(
    scores: Scores, sites: pl.DataFrame, genes: pl.DataFrame, genome: Genome, settings: CallSettings, rng
) -> tuple[pl.DataFrame, dict]:
    keyed = sites.with_columns(pl.Series("key", encode(sites, scores.groups), dtype=pl.Int64))
    occupied = occupied_positions(scores, keyed, settings.threshold)
    frames: list[pl.DataFrame] = []
    reports, drawn = {}, np.empty(0, dtype=np.int64)
    for splice_type in SPLICE_TYPES:
        typed_frames, reports[splice_type] = call_one_type(
            scores, keyed, splice_type, settings, genome, rng, (occupied, drawn)
        )
        frames += typed_frames
        drawn = np.union1d(drawn, typed_frames[-1]["key"].to_numpy())
    calls = describe_calls(pl.concat(frames, how="diagonal"), scores, genome, settings.consensus_window)
    calls = containing_genes(calls.with_row_index("row"), genes).drop("row")
    clusters = [GENE_CLUSTER] if GENE_CLUSTER in genes.columns else []
    spans = genes.select(
        "gene_id", pl.col("start").alias("gene_start"), pl.col("end").alias("gene_end"), *clusters
    )
    return calls.join(spans, on="gene_id", how="left").select(*CALLS_COLUMNS, *clusters), reports


def fn_vs_tn_distance(calls: pl.DataFrame, splice_type: str) -> float:
    """How close the decoy TN scores came to the FN scores (KS statistic; negatives.py)."""
    typed = calls.filter(pl.col("splice_type") == splice_type)
    scores = [typed.filter(pl.col("pred_type") == p)["score"].to_numpy().astype(float) for p in ("FN", "TN")]
    return ks_distance(*scores)


def summarise(calls: pl.DataFrame, reports: dict, settings: CallSettings) -> dict:
    counts = calls.group_by("splice_type", "pred_type").len()
    canonical = calls.with_columns(
        pl.when(pl.col("splice_type") == "donor")
        .then(pl.col("dinucleotide") == "GT")
        .otherwise(pl.col("dinucleotide") == "AG")
        .alias("canonical")
    )
    shares = canonical.group_by("splice_type", "pred_type").agg(pl.col("canonical").mean())
    summary = {
        "threshold": settings.threshold,
        "consensus_window": settings.consensus_window,
        "negatives": settings.negatives,
        "per_error": settings.per_error,
        "seed": settings.seed,
        "counts": {},
        "canonical_dinucleotide": {},
        **{f"{t}_report": r for t, r in reports.items()},
    }
    for splice_type in reports:
        summary[f"{splice_type}_report"]["ks_fn_vs_tn_score"] = fn_vs_tn_distance(calls, splice_type)
    for row in counts.iter_rows(named=True):
        summary["counts"].setdefault(row["splice_type"], {})[row["pred_type"]] = row["len"]
    for row in shares.iter_rows(named=True):
        summary["canonical_dinucleotide"].setdefault(row["splice_type"], {})[row["pred_type"]] = round(
            row["canonical"], 4
        )
    return summary
