"""The blocks' sequence and labels as two flat arrays (the BASE_DATA contract).

Block i occupies [offset, offset + length) of both arrays, length = core + 2 * half_context, read
in the block's direction (reverse complement on the - strand). The sequence is the genome's DNA
over [core_start - half_context, core_end + half_context), N (4) only past a chromosome end and,
in train and validation blocks, over any test block's core (a held-out gene is never seen in
training, not even as context). Labels: -1 outside the core (and where masked), 0 neither,
1 acceptor, 2 donor (OpenSpliceAI's channel order) at the annotated sites on the block's strand.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from workflow_scripts.data.genome import Genome

N_CODE = 4
CODES = np.full(256, N_CODE, dtype=np.uint8)
CODES[np.frombuffer(b"ACGTacgt", np.uint8)] = [0, 1, 2, 3, 0, 1, 2, 3]
ACCEPTOR, DONOR, FLANK = 1, 2, -1


def encode(bases: np.ndarray) -> np.ndarray:
    """ASCII bases (the genome index's uint8) -> codes A0 C1 G2 T3 N4."""
    return CODES[bases]


def reverse_complement(codes: np.ndarray) -> np.ndarray:
    out = codes[::-1].copy()
    known = out < N_CODE
    out[known] = 3 - out[known]
    return out


def genomic_window(genome: Genome, chrom: str, start: int, end: int) -> tuple[np.ndarray, int]:
    """Codes of [start, end) on the forward strand, N past the chromosome's ends; and how many N
    were added there."""
    index = genome.index_of[chrom]
    length, offset = int(genome.lengths[index]), int(genome.offsets[index])
    out = np.full(end - start, N_CODE, dtype=np.uint8)
    lo, hi = max(start, 0), min(end, length)
    if hi > lo:
        out[lo - start : hi - start] = encode(np.asarray(genome.sequence[offset + lo : offset + hi]))
    return out, (end - start) - max(hi - lo, 0)


def site_index(blocks: pl.DataFrame, sites: pl.DataFrame, half_context: int) -> pl.DataFrame:
    """Each site inside a block's core on its strand: block, index (flat position in the arrays),
    label (1 acceptor, 2 donor). Cores of one chromosome and strand never overlap."""
    found = (
        sites.select(
            "chrom",
            "strand",
            (pl.col("position").cast(pl.Int64) - 1).alias("g"),
            pl.when(pl.col("splice_type") == "donor")
            .then(DONOR)
            .otherwise(ACCEPTOR)
            .cast(pl.Int8)
            .alias("label"),
        )
        .sort("g")
        .join_asof(
            blocks.select("block", "chrom", "strand", "core_start", "core_end", "offset").sort("core_start"),
            left_on="g",
            right_on="core_start",
            by=["chrom", "strand"],
            strategy="backward",
            check_sortedness=False,  # sorted by g and core_start overall, so within each group too
        )
        .filter(pl.col("block").is_not_null() & (pl.col("g") < pl.col("core_end")))
    )
    plus = pl.col("strand") == "+"
    inside = (
        pl.when(plus).then(pl.col("g") - pl.col("core_start")).otherwise(pl.col("core_end") - 1 - pl.col("g"))
    )
    return found.select("block", (pl.col("offset") + half_context + inside).alias("index"), "label")


def test_cores(blocks: pl.DataFrame) -> dict[str, np.ndarray]:
    """Per chromosome, the test blocks' cores as sorted (n, 2) [start, end) intervals (either strand)."""
    test = blocks.filter(pl.col("split") == "test").sort("core_start")
    return {
        chrom: part.select("core_start", "core_end").to_numpy()
        for (chrom,), part in test.group_by("chrom", maintain_order=True)
    }


def mask_ranges(masked: np.ndarray, start: int, end: int) -> list[tuple[int, int]]:
    """The parts of [start, end) covered by the intervals `masked` (sorted by start), relative to start."""
    if masked.size == 0:
        return []
    hits = masked[(masked[:, 0] < end) & (masked[:, 1] > start)]
    return [(max(a, start) - start, min(b, end) - start) for a, b in hits.tolist()]


def fill_block(
    genome: Genome,
    block: dict,
    half_context: int,
    masked: np.ndarray,
    sequence: np.ndarray,
    labels: np.ndarray,
) -> dict[str, int]:
    """Write one block into the flat arrays at its offset; its counts of padding and masked nt."""
    start, end = block["core_start"] - half_context, block["core_end"] + half_context
    codes, padding = genomic_window(genome, block["chrom"], start, end)
    label = np.zeros(end - start, dtype=np.int8)
    label[:half_context] = FLANK
    label[end - start - half_context :] = FLANK
    masked_nt = 0
    if block["split"] != "test":
        for lo, hi in mask_ranges(masked, start, end):
            codes[lo:hi] = N_CODE
            label[lo:hi] = FLANK
            masked_nt += hi - lo
    if block["strand"] == "-":
        codes, label = reverse_complement(codes), label[::-1]
    where = slice(block["offset"], block["offset"] + block["length"])
    sequence[where] = codes
    labels[where] = label
    return {"padding_nt": padding, "masked_nt": masked_nt}


def place_sites(labels: np.ndarray, found: pl.DataFrame) -> int:
    """Write the site labels where the block's label is 0 or a site (not masked); a position that
    is a donor in one transcript and an acceptor in another stays a donor. Returns the sites placed."""
    index = found["index"].to_numpy()
    label = found["label"].to_numpy()
    keep = labels[index] >= 0
    order = np.argsort(label[keep], kind="stable")  # donors (2) written last
    labels[index[keep][order]] = label[keep][order]
    return int(keep.sum())
