"""Regions are cut into the fewest chunks of one length, at most chunk_length for a region that
fits in one and up to a whole batch's nucleotides for a longer one: scores equal one direct pass
over each gene, and a region just over chunk_length reads about half of what fixed-length chunks
read."""

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
    assert summary["chunks"] <= fixed  # no more chunks than fixed-length cutting
    assert summary["input_nt"] < fixed * (chunk_length + ensemble.context)  # and fewer flanks read


def planned(ensemble, genome):  # noqa: F811
    return plan_regions(GENES, genome, merge_gap=ensemble.context)


@pytest.mark.parametrize(
    "batch_size,on_cpu,on_gpu",
    [
        (1, [300, 39_999, 22_500, 30_001, 38_462], [5000, 40_000, 25_000, 35_000, 40_000]),
        (4, [300, 39_999, 45_000, 120_001, 125_000], [5000, 40_000, 45_000, 125_000, 125_000]),
    ],
)
def test_chunk_size_is_even_and_rounded(weights, genome, batch_size, on_cpu, on_gpu):  # noqa: F811
    """One chunk up to chunk_length; a longer region in chunks of up to a batch's nt less one
    context (batch_size 1: chunk_length, as before), evenly, rounded to CUDA_CHUNK_STEP on a GPU."""
    lengths = (300, 39_999, 45_000, 120_001, 500_000)
    for step, expected in ((1, on_cpu), (scoring.CUDA_CHUNK_STEP, on_gpu)):
        scorer = scoring.RegionScorer(load_ensemble(weights), genome, torch.device("cpu"), batch_size, 40_000)
        scorer.chunk_step = step
        regions = [Region(0, False, 0, length, ()) for length in lengths]
        assert [scorer.chunk_size(region) for region in regions] == expected
        for region, size in zip(regions, expected):
            assert len(scorer.chunk_starts(region)) * size >= region.end - region.start
            per_batch = scorer.chunks_per_batch(size)
            assert per_batch * (size + scorer.context) <= scorer.batch_input_nt
            assert per_batch == (
                batch_size if size <= 40_000 else scorer.batch_input_nt // (size + scorer.context)
            )
