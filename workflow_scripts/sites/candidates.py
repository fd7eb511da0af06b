"""Candidate sites: the base model's local score maxima, matched to the annotated sites.

For each splice type a candidate is a scored position whose score for that type is at or above
`sites.floor` and the highest within ±`sites.peak_radius` nt on its chromosome and strand (on a
plateau the lowest coordinate wins). A candidate is a *true site* when an annotated site of its
type lies within ±`calling.consensus_window` nt (make_calls' TP rule). An annotated site with no
candidate within that window is *missed*: no predictor can call it, so it is an FN for all of them.
As in make_calls, only annotated sites whose own position was scored are counted.

A candidate's gene is its nearest site's gene when it is true, else the smallest gene whose span
holds it on its strand (make_calls' rule for FP). Its features, for the tree: the donor and the
acceptor scores at -flank..+flank nt in the transcript's direction (NaN where unscored), and
whether it is a donor candidate.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import polars as pl

from workflow_scripts.calling.calls import containing_genes, lookup
from workflow_scripts.calling.scores import POSITION_BITS, SPLICE_TYPES, Scores, decode, encode
from workflow_scripts.sites.settings import SiteSettings

CANDIDATE_SCHEMA = {
    "key": pl.Int64,
    "splice_type": pl.String,
    "base_score": pl.Float32,
    "is_true_site": pl.Boolean,
    "gene_id": pl.String,
}
SITE_FIELDS = ("key", "chrom", "strand", "position", "splice_type", "gene_id", "base_score")
NO_GENE = "(no gene)"  # the gene_id of a false candidate outside every annotated gene on its strand


@dataclass
class Candidates:
    """Candidates (table rows, features rows) and the scored annotated sites they are matched to."""

    table: pl.DataFrame  # key, splice_type, base_score, is_true_site, chrom, strand, position, gene_id
    features: np.ndarray  # (candidates, 2 * (2 * flank + 1) + 1) float32
    sites: pl.DataFrame  # SITE_FIELDS; base_score = the score at the site's own position
    members: np.ndarray  # (sites, 2w + 1): row of each candidate within ±w of each site, -1 = none

    @classmethod
    def concat(cls, parts: list[Candidates]) -> Candidates:
        offsets = np.cumsum([0] + [p.table.height for p in parts[:-1]])
        members = [np.where(p.members >= 0, p.members + offset, -1) for p, offset in zip(parts, offsets)]
        return cls(
            pl.concat([p.table for p in parts]),
            np.concatenate([p.features for p in parts]),
            pl.concat([p.sites for p in parts]),
            np.concatenate(members).astype(np.int64),
        )

    @property
    def missed(self) -> np.ndarray:
        """Sites with no candidate within ±w."""
        return np.asarray((self.members < 0).all(axis=1))


def peak_indices(scores: Scores, values: np.ndarray, floor: float, radius: int) -> np.ndarray:
    """Indices of the positions >= floor whose value is the highest within ±radius (same strand);
    a neighbour to the left equal to it wins (one candidate per plateau)."""
    above = np.flatnonzero(values >= floor)
    keys, own = scores.keys[above], values[above]
    is_peak = np.ones(len(above), dtype=bool)
    for offset in range(1, radius + 1):
        is_peak &= ~(lookup(scores, keys - offset, values) >= own)  # NaN (unscored) compares False
        is_peak &= ~(lookup(scores, keys + offset, values) > own)
    return above[is_peak]


def exact_index(sorted_keys: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Index of each key in sorted_keys, -1 where absent."""
    if len(sorted_keys) == 0:
        return np.full(len(keys), -1, dtype=np.int64)
    index = np.minimum(np.searchsorted(sorted_keys, keys), len(sorted_keys) - 1)
    return np.where(sorted_keys[index] == keys, index, -1)


def window_offsets(window: int) -> list[int]:
    """0, -1, +1, -2, +2, ...: nearest first, the lower coordinate first on a tie."""
    return [0] + [sign * d for d in range(1, window + 1) for sign in (-1, 1)]


def nearest_site(candidate_keys: np.ndarray, site_keys: np.ndarray, window: int) -> np.ndarray:
    """For each candidate, the index of the nearest site within ±window (-1: none)."""
    found = np.full(len(candidate_keys), -1, dtype=np.int64)
    for offset in window_offsets(window):
        index = exact_index(site_keys, candidate_keys + offset)
        found = np.where(found < 0, index, found)
    return found


def window_members(site_keys: np.ndarray, candidate_keys: np.ndarray, window: int) -> np.ndarray:
    """(sites, 2w + 1): the candidate at each offset -w..+w of each site, -1 where none."""
    columns = [exact_index(candidate_keys, site_keys + offset) for offset in range(-window, window + 1)]
    return np.stack(columns, axis=1) if columns else np.empty((len(site_keys), 0), dtype=np.int64)


def strand_signs(keys: np.ndarray, groups: list[tuple[str, str]]) -> np.ndarray:
    """+1 on the + strand, -1 on the - strand: the transcript's direction."""
    minus = np.array([strand == "-" for _, strand in groups], dtype=bool)
    return np.where(minus[keys >> POSITION_BITS], -1, 1).astype(np.int64)


def profile_features(scores: Scores, keys: np.ndarray, splice_type: str, flank: int) -> np.ndarray:
    """Donor scores at -flank..+flank, acceptor scores at -flank..+flank (transcript direction), is-donor."""
    signs = strand_signs(keys, scores.groups)
    columns = [
        lookup(scores, keys + offset * signs, values)
        for values in (scores.donor, scores.acceptor)
        for offset in range(-flank, flank + 1)
    ]
    columns.append(np.full(len(keys), float(splice_type == "donor")))
    return np.stack(columns, axis=1).astype(np.float32)


def feature_names(flank: int) -> list[str]:
    offsets = range(-flank, flank + 1)
    return [f"{t}_{o:+d}" for t in SPLICE_TYPES for o in offsets] + ["is_donor"]


def type_candidates(
    scores: Scores, sites: pl.DataFrame, splice_type: str, settings: SiteSettings
) -> Candidates:
    """One chromosome's candidates of one type; `sites`: its scored sites of that type, by key."""
    values = scores.of(splice_type)
    chosen = peak_indices(scores, values, settings.floor, settings.peak_radius)
    keys = scores.keys[chosen]
    site_keys = sites["key"].to_numpy()
    matched = nearest_site(keys, site_keys, settings.consensus_window)
    site_genes = np.array([*sites["gene_id"].to_list(), None], dtype=object)  # index -1: no site
    table = pl.DataFrame(
        {
            "key": keys,
            "splice_type": splice_type,
            "base_score": values[chosen],
            "is_true_site": matched >= 0,
            "gene_id": site_genes[matched].tolist(),
        },
        schema=CANDIDATE_SCHEMA,
    )
    table = pl.concat([table, decode(keys, scores.groups)], how="horizontal")
    members = window_members(site_keys, keys, settings.consensus_window)
    features = profile_features(scores, keys, splice_type, settings.flank)
    return Candidates(table, features, sites.select(SITE_FIELDS), members)


def scored_sites(scores: Scores, sites: pl.DataFrame) -> pl.DataFrame:
    """The chromosome's annotated sites whose own position is scored, with key and base_score."""
    keyed = sites.with_columns(pl.Series("key", encode(sites, scores.groups), dtype=pl.Int64))
    own = np.where(
        keyed["splice_type"].to_numpy() == "donor",
        lookup(scores, keyed["key"].to_numpy(), scores.donor),
        lookup(scores, keyed["key"].to_numpy(), scores.acceptor),
    )
    keyed = keyed.with_columns(pl.Series("base_score", own, dtype=pl.Float32))
    return keyed.filter(pl.col("base_score").is_not_nan()).sort("splice_type", "key")


def chromosome_candidates(
    scores: Scores, sites: pl.DataFrame, genes: pl.DataFrame, settings: SiteSettings
) -> Candidates:
    scored = scored_sites(scores, sites)
    parts = [
        type_candidates(scores, scored.filter(pl.col("splice_type") == t), t, settings) for t in SPLICE_TYPES
    ]
    found = Candidates.concat(parts)
    located = containing_genes(found.table.with_row_index("row"), genes).sort("row").drop("row")
    found.table = located.with_columns(pl.col("gene_id").fill_null(NO_GENE))
    return found


def find_candidates(
    parts: Iterable[tuple[str, Scores]],
    sites: pl.DataFrame,
    genes: pl.DataFrame,
    settings: SiteSettings,
    progress=lambda line: None,
) -> Candidates:
    """Every chromosome's candidates (ScoreTables.by_chromosome: one chromosome in memory at a time)."""
    found = []
    for chrom, scores in parts:
        on_chrom = pl.col("chrom") == chrom
        found.append(chromosome_candidates(scores, sites.filter(on_chrom), genes.filter(on_chrom), settings))
        progress(
            f"{chrom}: {len(scores):,} scored positions, {found[-1].table.height:,} candidates, "
            f"{found[-1].sites.height:,} scored sites"
        )
    if not found:
        raise ValueError("no chromosome was scored")
    return Candidates.concat(found)
