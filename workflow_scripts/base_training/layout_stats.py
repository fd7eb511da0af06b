"""What a layout costs per labelled nucleotide: errorseq's blocks beside OpenSpliceAI's windows on
the same genes.

errorseq (base_data): a block reads its core plus `half_context` nt of real DNA each side; every
core nt is labelled. Padding = N the block holds that are not the genome's (past a chromosome end,
or a test core masked out of a training block's flank).

OpenSpliceAI's create-data (0.0.7, create_data/utils.py: create_datapoints, reformat_data): each
gene (its gene feature's span, one transcript) is padded with CL_max / 2 = 5,000 N on each side,
then SL = 5,000 more N at the end, and cut into ceil(L / SL) windows of SL + CL_max = 15,000 nt
that each predict SL positions (-1 past the gene). For a model of flank F < 10,000 it crops the same
windows (its `clip_datapoints`), so it reads SL + F nt per window; the labelled nt do not change.
The arithmetic here is that layout's, checked against its own create_datapoints in
tests/unit/test_base_layout_stats.py.
"""

from __future__ import annotations

import numpy as np

OSAI_SL = 5_000  # labelled positions per window
OSAI_CL_MAX = 10_000  # context of the stored windows (5,000 N each side of a gene)


def osai_windows(lengths: np.ndarray) -> np.ndarray:
    return -(-np.asarray(lengths, dtype=np.int64) // OSAI_SL)


def osai_layout(lengths: np.ndarray, context: int = OSAI_CL_MAX) -> dict[str, float]:
    """OpenSpliceAI's layout for genes of `lengths` nt, cropped to a model of `context` nt."""
    lengths = np.asarray(lengths, dtype=np.int64)
    windows = osai_windows(lengths)
    crop = (OSAI_CL_MAX - context) // 2
    # window i reads padded positions [i*SL + crop, i*SL + SL + CL_max - crop); the gene lies at
    # [CL_max/2, CL_max/2 + L) of the padded sequence
    real = 0
    for length, count in zip(lengths.tolist(), windows.tolist(), strict=True):
        starts = np.arange(count, dtype=np.int64) * OSAI_SL + crop
        ends = starts + OSAI_SL + context
        gene_start, gene_end = OSAI_CL_MAX // 2, OSAI_CL_MAX // 2 + length
        real += int(np.clip(np.minimum(ends, gene_end) - np.maximum(starts, gene_start), 0, None).sum())
    input_nt = int(windows.sum()) * (OSAI_SL + context)
    return summary(input_nt, int(lengths.sum()), input_nt - real, int(windows.sum()), len(lengths))


def errorseq_layout(
    core_lengths: np.ndarray, half_context: int, padding_nt: int, genes: int
) -> dict[str, float]:
    """errorseq's blocks of `core_lengths` nt, each read with `half_context` nt each side."""
    core_lengths = np.asarray(core_lengths, dtype=np.int64)
    input_nt = int(core_lengths.sum()) + 2 * half_context * len(core_lengths)
    return summary(input_nt, int(core_lengths.sum()), padding_nt, len(core_lengths), genes)


def summary(input_nt: int, labelled_nt: int, padding_nt: int, pieces: int, genes: int) -> dict[str, float]:
    return {
        "genes": genes,
        "pieces": pieces,  # blocks, or OpenSpliceAI's windows
        "input_nt": input_nt,
        "labelled_nt": labelled_nt,
        "input_per_labelled": round(input_nt / max(labelled_nt, 1), 4),
        "padding_nt": padding_nt,
        "padding_share": round(padding_nt / max(input_nt, 1), 4),
    }


def layout_table(errorseq: dict, osai: dict) -> list[str]:
    """The two layouts as aligned text rows (the benchmark's and the log's table)."""
    rows = [
        ("layout", "genes", "pieces", "input nt", "labelled nt", "input/labelled", "padding nt", "padding")
    ]
    for name, stats in (("errorseq blocks", errorseq), ("OpenSpliceAI windows", osai)):
        rows.append(
            (
                name,
                f"{stats['genes']:,}",
                f"{stats['pieces']:,}",
                f"{stats['input_nt']:,}",
                f"{stats['labelled_nt']:,}",
                f"{stats['input_per_labelled']:.2f}",
                f"{stats['padding_nt']:,}",
                f"{stats['padding_share']:.1%}",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)) for row in rows]
