"""OpenSpliceAI's data layout as arithmetic (read from openspliceai 0.0.7's `create_data/utils.py`
and `train_base/utils.py`): what its windows cost per labelled nucleotide, on any gene lengths.

Each gene (one transcript, its genomic span) is padded with CL_MAX/2 = 5,000 N on each side, then
cut into ceil(L / SL) windows: window i reads SL + CL_MAX = 15,000 nt starting at SL*i of the
padded gene and predicts SL = 5,000 labels; the last window's labels past the gene are unlabelled
(one-hot all zero: they add nothing to the loss's sum, though torch.mean counts them). A model of
flank F < CL_MAX reads the central SL + F of each window. Training and validation batches are
`batch_size(F)` windows with drop_last=True, per shard of 100 genes: a shard's last incomplete
batch is never seen (training shuffles which windows fall there; validation always drops the last).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

SL = 5_000  # labels per window
CL_MAX = 10_000  # context of the stored windows (5,000 N of padding at each gene end)
SHARD_GENES = 100  # genes per HDF5 shard (create_dataset.CHUNK_SIZE)
BATCH = {80: 36, 400: 36, 2_000: 24, 10_000: 12}  # transfer's BATCH_SIZE by flank (N_GPUS = 2)


def batch_size(flank: int) -> int:
    if flank not in BATCH:
        raise ValueError(f"flank {flank}: OpenSpliceAI trains flanks {', '.join(map(str, BATCH))}")
    return BATCH[flank]


def windows(gene_nt: int) -> int:
    """Windows of one gene of `gene_nt` nt."""
    return math.ceil(gene_nt / SL)


def gene_input_nt(gene_nt: int, flank: int) -> tuple[int, int]:
    """(input nt the model reads over all windows of the gene, of which gene nt): the rest is N
    padding (5,000 each side, and the zeros after the gene's end in the last window)."""
    clip = (CL_MAX - flank) // 2
    total = gene = 0
    for index in range(windows(gene_nt)):
        start = SL * index + clip  # in padded coordinates: the gene occupies [CL_MAX/2, CL_MAX/2 + L)
        end = SL * (index + 1) + CL_MAX - clip
        total += end - start
        gene += max(0, min(end, CL_MAX // 2 + gene_nt) - max(start, CL_MAX // 2))
    return total, gene


@dataclass(frozen=True)
class SplitLayout:
    """One split's genes in OpenSpliceAI's layout."""

    genes: int
    labelled_nt: int  # gene nt: every one is labelled once (0, 1 or 2)
    windows: int
    input_nt: int  # what the model reads (SL + flank per window)
    padding_nt: int  # of input_nt, N padding (no real DNA)
    label_slots: int  # windows * SL, the tensor the loss averages over
    seen_windows: int  # windows in full batches (drop_last, per shard of 100 genes)

    @property
    def input_per_labelled(self) -> float:
        return self.input_nt / self.labelled_nt if self.labelled_nt else math.nan

    @property
    def padding_share(self) -> float:
        return self.padding_nt / self.input_nt if self.input_nt else math.nan


def split_layout(gene_lengths: list[int], flank: int) -> SplitLayout:
    """The layout of genes of these lengths, in file order (shards of 100 genes)."""
    batch = batch_size(flank)
    input_nt = gene_nt = 0
    for length in gene_lengths:
        total, inside = gene_input_nt(length, flank)
        input_nt += total
        gene_nt += inside
    counts = [windows(length) for length in gene_lengths]
    seen = sum(
        sum(counts[first : first + SHARD_GENES]) // batch * batch
        for first in range(0, len(counts), SHARD_GENES)
    )
    return SplitLayout(
        genes=len(gene_lengths),
        labelled_nt=sum(gene_lengths),
        windows=sum(counts),
        input_nt=input_nt,
        padding_nt=input_nt - gene_nt,
        label_slots=sum(counts) * SL,
        seen_windows=seen,
    )
