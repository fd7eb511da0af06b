"""The intron's first (donor) or last (acceptor) two bases at a splice site, read on its strand.

Positions follow the convention of `calling.annotation` (1-based, the exon base at the
boundary): the canonical dinucleotides are GT right after a donor and AG right before an
acceptor, in the transcript's direction. On the forward strand of the genome that is

    donor    +  GT at position+1, position+2      -  AC at position-2, position-1
    acceptor +  AG at position-2, position-1      -  CT at position+1, position+2
"""

from __future__ import annotations

import numpy as np

from workflow_scripts.data.genome import COMPLEMENT

CANONICAL = {"donor": b"GT", "acceptor": b"AG"}


def dinucleotide_start(position: np.ndarray, minus: np.ndarray, donor: np.ndarray) -> np.ndarray:
    """0-based chromosome offset of the first of the two intron bases on the forward strand."""
    position = np.asarray(position, dtype=np.int64)
    after_exon = np.asarray(donor, dtype=bool) != np.asarray(minus, dtype=bool)  # donor+ or acceptor-
    return np.where(after_exon, position, position - 3)


def intron_dinucleotides(
    sequence: np.ndarray, chrom_offset: np.ndarray, chrom_length: np.ndarray, position, minus, donor
) -> np.ndarray:
    """(n, 2) uint8 bases on the site's strand; b'NN' where the pair leaves the chromosome."""
    start = dinucleotide_start(position, minus, donor)
    chrom_length = np.asarray(chrom_length, dtype=np.int64)
    inside = (start >= 0) & (start + 2 <= chrom_length)
    first = np.asarray(chrom_offset, dtype=np.int64) + np.where(inside, start, 0)
    pairs = np.stack([sequence[first], sequence[first + 1]], axis=1)
    minus = np.asarray(minus, dtype=bool)
    pairs[minus] = COMPLEMENT[pairs[minus][:, ::-1]]
    pairs[~inside] = ord("N")
    return pairs


def is_canonical(pairs: np.ndarray, splice_type: str) -> np.ndarray:
    expected = np.frombuffer(CANONICAL[splice_type], dtype=np.uint8)
    return (pairs == expected).all(axis=1)


def as_text(pairs: np.ndarray) -> list[str]:
    return [bytes(row).decode("ascii") for row in pairs]
