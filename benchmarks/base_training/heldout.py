"""Held-out top-k accuracy and AUPRC per site type, recomputed for any checkpoint in OpenSpliceAI's
state-dict format (either side's, each epoch, and the start weights) on the same held-out windows.

Two sets of windows of the same test genes and labels (OpenSpliceAI's `datafile_test.h5`):
- `padded`: OpenSpliceAI's own (`dataset_test.h5`): each gene between 5,000 N on each side;
- `genomic`: the same windows with the genome's real DNA where those N were (N only past a
  chromosome end), as a model sees a gene when it scores a genome.
Every window and every labelled position counts (OpenSpliceAI's own log keeps at most 1,000
windows that hold a site, in full batches only, and counts the unlabelled tail of a gene's last
window as negatives). Top-k (k = 1): of the n highest scores of a type, n = its true sites, the
share that are true sites. AUPRC: errorseq's average precision (workflow_scripts/metrics.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import h5py
import numpy as np
import torch

from benchmarks.base_training.layout import CL_MAX, SL, windows
from workflow_scripts.calling.openspliceai import load_openspliceai
from workflow_scripts.data.genome import COMPLEMENT, Genome
from workflow_scripts.errors import InputError
from workflow_scripts.metrics import average_precision

BASES = np.frombuffer(b"ACGT", dtype=np.uint8)
TYPES = {"acceptor": 1, "donor": 2}  # OpenSpliceAI's output channels


@dataclass
class Windows:
    onehot: np.ndarray  # (n, SL + flank, 4) uint8
    labels: np.ndarray  # (n, SL) int8: 0 neither, 1 acceptor, 2 donor, -1 unlabelled


def cut_windows(padded: np.ndarray, labels: np.ndarray, flank: int) -> tuple[np.ndarray, np.ndarray]:
    """OpenSpliceAI's windows of one gene: `padded` holds the gene's bases (ASCII) with CL_MAX/2
    nt before and after it, `labels` one per gene base; → (ASCII windows of SL + flank, labels)."""
    count = windows(len(labels))
    if len(padded) != len(labels) + CL_MAX:
        raise ValueError(
            f"padded gene of {len(padded)} nt for {len(labels)} labels: expected labels + {CL_MAX}"
        )
    bases = np.concatenate([padded, np.full(SL, ord("N"), np.uint8)])
    marks = np.concatenate([labels.astype(np.int8), np.full(SL, -1, np.int8)])
    clip = (CL_MAX - flank) // 2
    cut = np.stack([bases[SL * i + clip : SL * (i + 1) + CL_MAX - clip] for i in range(count)])
    return cut, np.stack([marks[SL * i : SL * (i + 1)] for i in range(count)])


def one_hot(ascii_windows: np.ndarray) -> np.ndarray:
    return (ascii_windows[..., None] == BASES).astype(np.uint8)


def padded_windows(dataset: Path, flank: int) -> Windows:
    """OpenSpliceAI's own windows (`dataset_*.h5`: X{i} one-hot, Y{i} one-hot labels)."""
    clip = (CL_MAX - flank) // 2
    with h5py.File(dataset, "r") as handle:
        shards = len(handle.keys()) // 2
        if shards == 0:
            raise InputError(dataset, "X0", "no windows: an empty split")
        xs = [handle[f"X{i}"][:, clip : SL + CL_MAX - clip, :].astype(np.uint8) for i in range(shards)]
        ys = [handle[f"Y{i}"][0] for i in range(shards)]
    y = np.concatenate(ys)
    labels = np.where(y.sum(axis=2) == 1, y.argmax(axis=2), -1).astype(np.int8)
    return Windows(np.concatenate(xs), labels)


def genomic_windows(datafile: Path, genome: Genome, flank: int) -> Windows:
    """The same genes and labels (`datafile_*.h5`), with the genome's DNA around each gene."""
    half = CL_MAX // 2
    cuts, marks = [], []
    with h5py.File(datafile, "r") as handle:
        fields = {
            key: [value.decode() for value in handle[key][:]]
            for key in ("CHROM", "STRAND", "TX_START", "TX_END", "SEQ", "LABEL")
        }
    for chrom, strand, start, end, seq, label in zip(*fields.values()):
        if chrom not in genome.index_of:
            raise InputError(datafile, "CHROM", f"{chrom} is not in the genome")
        index = genome.index_of[chrom]
        offset, length = int(genome.offsets[index]), int(genome.lengths[index])
        first, last = int(start) - 1 - half, int(end) + half  # 0-based, half-open
        inside = genome.sequence[offset + max(first, 0) : offset + min(last, length)]
        bases = np.concatenate(
            [
                np.full(max(0, -first), ord("N"), np.uint8),
                inside,
                np.full(max(0, last - length), ord("N"), np.uint8),
            ]
        )
        bases = np.where(np.isin(bases, BASES), bases, np.uint8(ord("N"))).astype(np.uint8)
        if strand == "-":
            bases = COMPLEMENT[bases[::-1]]
        gene = bytes(bases[half : len(bases) - half]).decode()
        if gene != "".join(base if base in "ACGT" else "N" for base in seq.upper()):
            raise InputError(datafile, "SEQ", f"gene at {chrom}:{start}-{end} differs from the genome given")
        cut, mark = cut_windows(bases, np.frombuffer(label.encode(), np.uint8) - ord("0"), flank)
        cuts.append(cut)
        marks.append(mark)
    return Windows(one_hot(np.concatenate(cuts)), np.concatenate(marks))


def scores(checkpoint: Path, held_out: Windows, batch: int = 4) -> np.ndarray:
    """(n, 3, SL) probabilities of one checkpoint on the windows."""
    model = load_openspliceai(checkpoint)
    out = []
    with torch.inference_mode():
        for first in range(0, len(held_out.onehot), batch):
            x = torch.from_numpy(held_out.onehot[first : first + batch]).float().permute(0, 2, 1)
            out.append(model(x).numpy())
    return np.concatenate(out)


def top_k_accuracy(truth: np.ndarray, score: np.ndarray) -> float:
    """Share of true sites among the n top scores, n = true sites (k = 1)."""
    n = int(truth.sum())
    if n == 0:
        return float("nan")
    top = np.argpartition(-score, n - 1)[:n]
    return float(truth[top].mean())


def metrics(probabilities: np.ndarray, labels: np.ndarray) -> dict[str, dict[str, float]]:
    """{type: {topk, auprc, sites}} over every labelled position."""
    labelled = labels >= 0
    found = {}
    for kind, channel in TYPES.items():
        truth = labels[labelled] == channel
        score = probabilities[:, channel, :][labelled]
        auprc = average_precision(truth, score)
        found[kind] = {
            "topk": top_k_accuracy(truth, score),
            "auprc": float("nan") if auprc is None else auprc,
            "sites": int(truth.sum()),
        }
    return found
