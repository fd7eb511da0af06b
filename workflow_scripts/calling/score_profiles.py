"""The base model's score profiles along each window: the `donor_scores` and `acceptor_scores` columns.

The contract (extract writes them in calls mode when the pipeline made the calls, calling.start
`scores` or `annotation`; model inputs and the score_profile_tree baseline read them):

* `donor_scores`, `acceptor_scores`: List(Float32), exactly one value per base of `sequence`;
  value i belongs to base i of the window, in the window's reading direction. A minus-strand
  window is reverse-complemented, so its values run from the highest genomic position down.
* Each value is the base model's donor (acceptor) probability at that genomic position on the
  window's strand, as make_calls read it from the scores table(s): positions inside a selected
  gene's span on that strand.
* A position the table does not score gets UNSCORED (0.0): outside every selected gene's span on
  the window's strand (intergenic flank, a neighbouring gene on the other strand), a position the
  table leaves out, or past a chromosome end (where the window's bases are N). 0.0 reads as "the
  base model sees no site here", which is what it would say of almost every such position.
* The value at the site (index site_offset) of the call's own splice type equals its `score`.

Scores are read one chromosome at a time (calling/scores.py ScoreTables), and the windows of a
chromosome are looked up CHUNK_BASES window bases at a time with one searchsorted on the sorted
int64 keys, so memory holds one chromosome's scores, the output columns and one chunk.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import polars as pl

from workflow_scripts.calling.scores import POSITION_BITS, Scores

DONOR_SCORES, ACCEPTOR_SCORES = "donor_scores", "acceptor_scores"
PROFILE_COLUMNS = {"donor": DONOR_SCORES, "acceptor": ACCEPTOR_SCORES}
UNSCORED = 0.0
CHUNK_BASES = 1 << 22  # window bases looked up at a time (a few tens of MB of keys)


def has_profiles(columns: Iterable[str]) -> bool:
    """Whether a windows table carries both profile columns."""
    return set(PROFILE_COLUMNS.values()) <= set(columns)


def genomic_positions(position: np.ndarray, minus: np.ndarray, flank: int) -> np.ndarray:
    """(windows, 2*flank+1) 1-based genomic position of each window base in reading order:
    ascending on the plus strand, descending on the minus strand (reverse-complemented)."""
    offsets = np.arange(-flank, flank + 1, dtype=np.int64)
    return position.astype(np.int64)[:, None] + np.where(minus[:, None], -offsets, offsets)


def window_keys(
    scores: Scores, chrom: str, chrom_length: int, position: np.ndarray, minus: np.ndarray, flank: int
) -> tuple[np.ndarray, np.ndarray]:
    """(windows, 2*flank+1) keys of the window bases of windows on one chromosome (calling/scores.py:
    group << POSITION_BITS | position, the group being the chromosome and the window's strand),
    and whether each base lies within the chromosome (a key outside it is a placeholder)."""
    group_of = {group: index for index, group in enumerate(scores.groups)}
    group = np.where(minus, group_of[(chrom, "-")], group_of[(chrom, "+")]).astype(np.int64)
    positions = genomic_positions(position, minus, flank)
    valid = (positions >= 1) & (positions <= chrom_length)
    return (group[:, None] << POSITION_BITS) | np.where(valid, positions, 0), valid


def lookup(scores: Scores, keys: np.ndarray, valid: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Donor and acceptor scores at `keys` (any shape), UNSCORED where a key is not scored or not
    `valid`; and how many keys were scored (a score of 0.0 in the table counts as scored)."""
    if len(scores) == 0:
        return np.full(keys.shape, UNSCORED, np.float32), np.full(keys.shape, UNSCORED, np.float32), 0
    flat = keys.ravel()
    index = np.minimum(np.searchsorted(scores.keys, flat), len(scores) - 1)
    hit = valid.ravel() & (scores.keys[index] == flat)
    donor, acceptor = (
        np.where(hit, values[index], UNSCORED).astype(np.float32).reshape(keys.shape)
        for values in (scores.donor, scores.acceptor)
    )
    return donor, acceptor, int(hit.sum())


def profile_arrays(
    parts: Iterable[tuple[str, Scores]], frame: pl.DataFrame, chrom_lengths: dict[str, int], flank: int
) -> tuple[np.ndarray, np.ndarray, int]:
    """The (windows, 2*flank+1) donor and acceptor profiles of `frame`'s rows (chrom, position,
    strand) from each chromosome's Scores, and how many window bases were scored."""
    shape = (frame.height, 2 * flank + 1)
    donor, acceptor = np.full(shape, UNSCORED, np.float32), np.full(shape, UNSCORED, np.float32)
    chroms, positions = frame["chrom"].to_numpy(), frame["position"].to_numpy()
    minus = (frame["strand"] == "-").to_numpy()
    per_chunk, scored = max(1, CHUNK_BASES // shape[1]), 0
    for chrom, scores in parts:
        rows = np.flatnonzero(chroms == chrom)
        for start in range(0, len(rows), per_chunk):
            chunk = rows[start : start + per_chunk]
            keys, valid = window_keys(
                scores, chrom, chrom_lengths[chrom], positions[chunk], minus[chunk], flank
            )
            donor[chunk], acceptor[chunk], hits = lookup(scores, keys, valid)
            scored += hits
    return donor, acceptor, scored


def list_column(name: str, values: np.ndarray) -> pl.Series:
    """A (rows, length) float32 array as a List(Float32) column."""
    return pl.Series(name, values).cast(pl.List(pl.Float32))


def with_score_profiles(
    frame: pl.DataFrame, parts: Iterable[tuple[str, Scores]], chrom_lengths: dict[str, int], flank: int
) -> tuple[pl.DataFrame, dict]:
    """`frame` with DONOR_SCORES and ACCEPTOR_SCORES (the module docstring), and a report: window
    bases in all, how many are scored, and the share."""
    donor, acceptor, scored = profile_arrays(parts, frame, chrom_lengths, flank)
    bases = donor.size
    report = {"bases": bases, "scored_bases": scored, "scored_share": scored / bases if bases else None}
    return frame.with_columns(
        list_column(DONOR_SCORES, donor), list_column(ACCEPTOR_SCORES, acceptor)
    ), report
