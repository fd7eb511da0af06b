"""Regions are cut into the fewest chunks of at most chunk_length, all of one length: scores equal
one direct pass over each gene, and a region just over chunk_length reads about half of what
fixed-length chunks read."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
import torch

from tests.unit.test_scoring import GENES, direct_scores, genome, settings, weights  # noqa: F401 (fixtures)
from workflow_scripts.calling import scoring
from workflow_scripts.calling.regions import Region, plan_regions
from workflow_scripts.calling.spliceai import load_ensemble


@pytest.mark.parametrize("chunk_length", [32, 150])
def test_even_chunks_give_the_direct_pass_scores(tmp_path, genome, weights, chunk_length):  # noqa: F811
    ensemble = load_ensemble(weights)
    summary = scoring.score_genes(
        ensemble, genome, GENES, tmp_path / "s.parquet", settings(3, chunk_length), progress_every_s=1e9
    )
    scores = pl.read_parquet(tmp_path / "s.parquet")
    for gene in GENES.iter_rows(named=True):
        got = scores.filter(pl.col("gene_id") == gene["gene_id"]).select("donor", "acceptor").to_numpy()
        np.testing.assert_allclose(got, direct_scores(ensemble, genome, gene), atol=2e-6)
    fixed = sum(-(-(r.end - r.start) // chunk_length) for r in planned(ensemble, genome))
    assert summary["chunks"] == fixed  # as few chunks as fixed-length cutting
    assert summary["input_nt"] < fixed * (chunk_length + ensemble.context)  # but shorter ones


def planned(ensemble, genome):  # noqa: F811
    return plan_regions(GENES, genome, merge_gap=ensemble.context)


def test_chunk_size_is_even_and_rounded(weights, genome):  # noqa: F811
    scorer = scoring.RegionScorer(load_ensemble(weights), genome, torch.device("cpu"), 4, 40_000)
    lengths = (300, 39_999, 45_000, 120_001)
    sizes = [scorer.chunk_size(Region(0, False, 0, length, ())) for length in lengths]
    assert sizes == [300, 39_999, 22_500, 30_001]
    scorer.chunk_step = scoring.CUDA_CHUNK_STEP  # on a GPU: few shapes
    assert [scorer.chunk_size(Region(0, False, 0, length, ())) for length in lengths] == [
        5000,
        40_000,
        25_000,
        35_000,
    ]
