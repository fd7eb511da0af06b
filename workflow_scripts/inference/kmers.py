"""k-mer enrichment in error windows against correct windows.

For every k-mer (A, C, G, T only) seen in the windows: how many error and how many correct windows
hold it at least once, the odds ratio of holding it (error vs correct; 0.5 added to each cell),
and a one-sided Fisher exact test of enrichment in the error windows (the hypergeometric upper
tail), with Benjamini-Hochberg q-values over all k-mers tested. Rows are sorted by p-value, then
by odds ratio: the most enriched k-mers first. Columns: artifacts.KMER_COLUMNS.
"""

from __future__ import annotations

import numpy as np
import polars as pl
from scipy.stats import false_discovery_control, hypergeom

from workflow_scripts.artifacts import KMER_COLUMNS

BASE_CODE = np.full(256, 4, dtype=np.int64)
BASE_CODE[np.frombuffer(b"ACGT", np.uint8)] = np.arange(4)
ROWS_AT_A_TIME = 4096


def kmer_code_rows(sequences: list[str], k: int) -> tuple[np.ndarray, np.ndarray]:
    """(window index, k-mer code) of every distinct k-mer in each window (k-mers with N left out)."""
    rows, codes = [], []
    for length in sorted({len(s) for s in sequences}):
        members = np.array([i for i, s in enumerate(sequences) if len(s) == length])
        if length < k:
            continue
        for start in range(0, len(members), ROWS_AT_A_TIME):
            chosen = members[start : start + ROWS_AT_A_TIME]
            raw = np.frombuffer("".join(sequences[i] for i in chosen).encode(), np.uint8).reshape(
                len(chosen), length
            )
            row, code = window_kmers(BASE_CODE[raw], k)
            rows.append(chosen[row])
            codes.append(code)
    if not rows:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return np.concatenate(rows), np.concatenate(codes)


def window_kmers(bases: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Distinct (row, code) pairs of the k-mers of equal-length rows of base codes (4 = N)."""
    n, length = bases.shape
    width = length - k + 1
    code = np.zeros((n, width), dtype=np.int64)
    valid = np.ones((n, width), dtype=bool)
    for offset in range(k):
        part = bases[:, offset : offset + width]
        code = code * 4 + np.minimum(part, 3)
        valid &= part < 4
    row = np.broadcast_to(np.arange(n)[:, None], (n, width))[valid]
    pairs = np.unique(row * 4**k + code[valid])
    return pairs // 4**k, pairs % 4**k


def decode(codes: np.ndarray, k: int) -> list[str]:
    letters = np.array(list("ACGT"))
    digits = (codes[:, None] // 4 ** np.arange(k - 1, -1, -1)) % 4
    return ["".join(row) for row in letters[digits]]


def kmer_enrichment(sequences: list[str], labels: np.ndarray, k: int) -> pl.DataFrame:
    """The enrichment table (module docstring) of the windows `sequences` labelled 1 = error."""
    labels = np.asarray(labels, dtype=np.int64)
    rows, codes = kmer_code_rows(sequences, k)
    seen = np.unique(codes)
    position = np.searchsorted(seen, codes)
    in_error = np.bincount(position[labels[rows] == 1], minlength=len(seen))
    in_correct = np.bincount(position[labels[rows] == 0], minlength=len(seen))
    n_error, n_correct = int((labels == 1).sum()), int((labels == 0).sum())
    # P(at least in_error of the n_error error windows | in_error + in_correct windows hold it)
    p_value = hypergeom.sf(in_error - 1, n_error + n_correct, in_error + in_correct, n_error)
    p_value = np.clip(p_value, 0.0, 1.0)
    odds = ((in_error + 0.5) * (n_correct - in_correct + 0.5)) / (
        (n_error - in_error + 0.5) * (in_correct + 0.5)
    )
    table = pl.DataFrame(
        {
            "kmer": decode(seen, k),
            "error_windows": in_error,
            "correct_windows": in_correct,
            "error_fraction": in_error / max(n_error, 1),
            "correct_fraction": in_correct / max(n_correct, 1),
            "odds_ratio": odds,
            "p_value": p_value,
            "q_value": false_discovery_control(p_value, method="bh") if len(seen) else np.zeros(0),
        }
    )
    return table.sort(["p_value", "odds_ratio"], descending=[False, True]).select(KMER_COLUMNS)
