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
import polars as pl

from workflow_scripts.calling.contract import GENE_CLUSTER
from workflow_scripts.sites.candidates import NO_GENE, Candidates

BLOCK_NT = 100_000  # sites/whole_region.py: the whole-region intervals' genomic block


@dataclass(frozen=True)
class Items:
    members: np.ndarray  # (items, 2w + 1): candidate rows, -1 = none
    is_site: np.ndarray  # bool
    splice_type: np.ndarray  # str
    fold: np.ndarray  # int, 1..k
    cluster: np.ndarray  # str: the bootstrap's resampled unit
    location: np.ndarray | None = None  # str: gene, antisense, intergenic (sites/whole_region.py)
    block: np.ndarray | None = None  # str: the genomic block, whole-region intervals' unit

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

        if "location" in false_part.columns:
            false_location = false_part["location"].to_numpy()
        elif "gene_id" in false_part.columns:  # no locations given: inside a gene on its strand or not
            false_location = np.where(false_part["gene_id"].to_numpy() == NO_GENE, "outside", "gene")
        else:
            false_location = np.full(len(false_rows), "gene")
        located = all({"chrom", "position"} <= set(frame.columns) for frame in (sites, false_part))
        blocks = [
            (frame["chrom"] + ":" + (frame["position"] // BLOCK_NT).cast(pl.String)).to_numpy()
            for frame in (sites, false_part)
            if located
        ]
        return cls(
            members=np.concatenate([found.members, false_members]),
            is_site=np.r_[np.ones(sites.height, bool), np.zeros(len(false_rows), bool)],
            splice_type=column("splice_type"),
            fold=column("fold"),
            cluster=column(GENE_CLUSTER),
            location=np.concatenate(
                [np.full(sites.height, "gene", dtype=object), false_location.astype(object)]
            ),
            block=np.concatenate(blocks).astype(object) if located else None,
        )

    def subset(self, mask: np.ndarray) -> Items:
        """The items in `mask` (their candidates' rows unchanged)."""

        def part(values: np.ndarray | None) -> np.ndarray | None:
            return None if values is None else values[mask]

        return Items(
            self.members[mask],
            self.is_site[mask],
            self.splice_type[mask],
            self.fold[mask],
            self.cluster[mask],
            part(self.location),
            part(self.block),
        )

    def in_genes(self) -> Items:
        """The items inside annotated genes on their strand: the scored sites and the false
        candidates there (site_metrics.json's in-gene figures)."""
        if self.location is None:
            return self
        return self.subset(self.location == "gene")

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
