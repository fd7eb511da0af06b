"""What site-level counting counts, as make_calls does: each scored annotated site is one item (a
TP when any candidate within ±w of it is called, else an FN) and each false candidate is one item
(an FP when called). A true candidate that is not called, or a second called candidate beside a
site, counts for nothing of its own.

An item's score under a predictor is the highest score among its candidates (NaN for a missed
site: it is never called), so every threshold's counts follow from item scores alone.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from workflow_scripts.calling.contract import GENE_CLUSTER
from workflow_scripts.sites.candidates import Candidates


@dataclass(frozen=True)
class Items:
    members: np.ndarray  # (items, 2w + 1): candidate rows, -1 = none
    is_site: np.ndarray  # bool
    splice_type: np.ndarray  # str
    fold: np.ndarray  # int, 1..k
    cluster: np.ndarray  # str: the bootstrap's resampled unit

    @classmethod
    def from_candidates(cls, found: Candidates) -> Items:
        table, sites = found.table, found.sites
        false_rows = np.flatnonzero(~table["is_true_site"].to_numpy())
        width = found.members.shape[1]
        false_members = np.full((len(false_rows), width), -1, dtype=np.int64)
        if width:
            false_members[:, 0] = false_rows
        false_part = table[false_rows]

        def column(name: str) -> np.ndarray:
            return np.concatenate([sites[name].to_numpy(), false_part[name].to_numpy()])

        return cls(
            members=np.concatenate([found.members, false_members]),
            is_site=np.r_[np.ones(sites.height, bool), np.zeros(len(false_rows), bool)],
            splice_type=column("splice_type"),
            fold=column("fold"),
            cluster=column(GENE_CLUSTER),
        )

    def __len__(self) -> int:
        return len(self.is_site)

    def scores(self, candidate_values: np.ndarray) -> np.ndarray:
        """Each item's highest candidate value; NaN where it has none (or only NaN)."""
        padded = np.append(np.asarray(candidate_values, dtype=float), np.nan)  # index -1 -> NaN
        if self.members.shape[1] == 0:
            return np.full(len(self), np.nan)
        return np.fmax.reduce(padded[self.members], axis=1)

    def called(self, candidate_calls: np.ndarray) -> np.ndarray:
        """Whether any of each item's candidates is called."""
        padded = np.append(np.asarray(candidate_calls, dtype=bool), False)
        return padded[self.members].any(axis=1)

    def of_type(self, splice_type: str | None) -> np.ndarray:
        """Mask of the items of one splice type (None: all)."""
        return np.ones(len(self), bool) if splice_type is None else self.splice_type == splice_type
