"""Base-model scoring over genes: chunked, batched, merged regions give the scores of one direct
pass over each gene's padded sequence; minus-strand genes reverse-complemented; N past chromosome
ends; the parquet contract; progress lines; one-line errors. On real A. thaliana genes with the
real SpliceAI models: tests/workflow/test_scoring.py."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest
import torch

from tests.spliceai_fixtures import write_spliceai_h5
from workflow_scripts.calling.contract import SCORE_COLUMNS
from workflow_scripts.calling.device import resolve_device
from workflow_scripts.calling.regions import plan_regions, read_genes
from workflow_scripts.calling.scoring import (
    BLOCK_BATCHES,
    SCORE_SCHEMA,
    RegionScorer,
    score_genes,
)
from workflow_scripts.calling.spliceai import ACCEPTOR, DONOR, load_ensemble, one_hot
from workflow_scripts.command_line import path_flags
from workflow_scripts.config.types import complete_typed_section
from workflow_scripts.data.genome import Genome
from workflow_scripts.data.tables import ParquetParts
from workflow_scripts.errors import InputError
from workflow_scripts.rules import score_base_model

COMPLEMENT = str.maketrans("ACGTN", "TGCAN")
# Genes on two chromosomes: at a chromosome start and end (N-padding), overlapping on one strand
# and across strands, close enough to share a region, a 1-nt gene, minus-strand genes.
GENES = pl.DataFrame(
    {
        "gene_id": [
            "start_plus",
            "near_plus",
            "long_minus",
            "overlap_minus",
            "end_minus",
            "other_plus",
            "one_nt",
        ],
        "chrom": ["c1", "c1", "c1", "c1", "c1", "c2", "c2"],
        "start": [1, 60, 100, 380, 650, 10, 150],
        "end": [50, 200, 400, 520, 700, 290, 150],
        "strand": ["+", "+", "-", "-", "-", "+", "-"],
        "biotype": ["protein_coding"] * 7,
    }
)


@pytest.fixture(scope="module")
def genome() -> Genome:
    rng = np.random.default_rng(11)
    bases = rng.choice(np.frombuffer(b"ACGT", np.uint8), size=1000)
    bases[rng.random(1000) < 0.01] = ord("N")
    return Genome(["c1", "c2"], np.array([700, 300]), bases.astype(np.uint8))


@pytest.fixture(scope="module")
def weights(tmp_path_factory):
    folder = tmp_path_factory.mktemp("weights")
    for seed in (1, 2):
        write_spliceai_h5(folder / f"model{seed}.h5", seed=seed)
    return folder


def direct_scores(ensemble, genome: Genome, gene: dict) -> np.ndarray:
    """One forward pass over the gene with its flanks, built as a string: (length, 2) donor, acceptor."""
    chromosome = genome.chromosome(gene["chrom"])
    left, right = ensemble.flank_left, ensemble.flank_right
    if gene["strand"] == "-":
        left, right = right, left
    begin, end = gene["start"] - 1 - left, gene["end"] + right
    text = "N" * max(-begin, 0) + chromosome[max(begin, 0) : end] + "N" * max(end - len(chromosome), 0)
    if gene["strand"] == "-":
        text = text.translate(COMPLEMENT)[::-1]
    codes = torch.frombuffer(bytearray(text.encode()), dtype=torch.uint8)[None]
    with torch.inference_mode():
        probabilities = ensemble(one_hot(codes))[0].numpy()
    scores = np.stack([probabilities[DONOR], probabilities[ACCEPTOR]], axis=1)
    return scores[::-1] if gene["strand"] == "-" else scores


def settings(batch_size=3, chunk_length=32, device="cpu"):
    """calling.base_model, typed as score_genes takes it: these keys, fp32, the schema's rest."""
    base_model = {
        "batch_size": batch_size,
        "chunk_length": chunk_length,
        "device": device,
        "precision": "fp32",
    }
    return complete_typed_section("calling", {"base_model": base_model}).base_model


@pytest.mark.parametrize("batch_size,chunk_length", [(3, 32), (1, 1000), (64, 7)])
def test_scores_equal_one_direct_pass_per_gene(tmp_path, genome, weights, batch_size, chunk_length):
    ensemble = load_ensemble(weights)
    out = tmp_path / "scores.parquet"
    summary = score_genes(
        ensemble, genome, GENES, out, settings(batch_size, chunk_length), progress_every_s=1e9
    )
    scores = pl.read_parquet(out)
    assert scores.columns == list(SCORE_COLUMNS) and dict(scores.schema) == SCORE_SCHEMA
    lengths = (GENES["end"] - GENES["start"] + 1).to_list()
    assert scores.height == sum(lengths) == summary["nt"]
    assert summary["regions"] < GENES.height  # neighbours share a region
    for gene in GENES.iter_rows(named=True):
        rows = scores.filter(pl.col("gene_id") == gene["gene_id"])
        assert rows["position"].to_list() == list(range(gene["start"], gene["end"] + 1))
        assert set(rows["chrom"]) == {gene["chrom"]} and set(rows["strand"]) == {gene["strand"]}
        expected = direct_scores(ensemble, genome, gene)
        got = rows.select("donor", "acceptor").to_numpy()
        np.testing.assert_allclose(got, expected, atol=2e-6, err_msg=gene["gene_id"])


@pytest.mark.parametrize("batch_size,chunk_length", [(4, 64), (2, 16)])
def test_gpu_layout_batches_chunks_by_length_and_changes_no_score(
    tmp_path, genome, weights, monkeypatch, batch_size, chunk_length
):
    """A GPU's layout on the CPU: chunk lengths in steps of 8, chunks batched by length across
    blocks of regions (one block of several lengths at (4, 64), several blocks at (2, 16)). Every batch holds one length, no
    more batches run than the lengths need, and every score is the direct pass's."""
    init, batches = RegionScorer.__init__, []

    def gpu_layout(scorer, *args, **kwargs):
        init(scorer, *args, **kwargs)
        scorer.chunk_step, scorer.block_nt = 8, BLOCK_BATCHES * scorer.batch_size * scorer.chunk_length

    planned_batches = RegionScorer.batches

    def recorded(scorer, regions):
        for chunks, size in planned_batches(scorer, regions):
            batches.append({scorer.chunk_size(regions[index]) for index, _ in chunks} | {-len(chunks)})
            yield chunks, size

    monkeypatch.setattr(RegionScorer, "__init__", gpu_layout)
    monkeypatch.setattr(RegionScorer, "batches", recorded)
    ensemble = load_ensemble(weights)
    out = tmp_path / "scores.parquet"
    score_genes(ensemble, genome, GENES, out, settings(batch_size, chunk_length), progress_every_s=1e9)
    lengths = [sorted(batch)[1:] for batch in batches]
    assert all(len(length) == 1 and length[0] % 8 == 0 for length in lengths)
    scorer = RegionScorer(ensemble, genome, torch.device("cpu"), batch_size, chunk_length)
    regions = plan_regions(GENES, genome, merge_gap=ensemble.context)
    blocks = list(scorer.blocks(regions))
    needed = sum(
        -(
            -sum(len(scorer.chunk_starts(regions[i])) for i in block if scorer.chunk_size(regions[i]) == size)
            // scorer.chunks_per_batch(size)
        )
        for block in blocks
        for size in {scorer.chunk_size(regions[i]) for i in block}
    )
    assert len(batches) == needed
    assert len(blocks) > 1 if chunk_length == 16 else len({length[0] for length in lengths}) > 2
    scores = pl.read_parquet(out)
    for gene in GENES.iter_rows(named=True):
        got = scores.filter(pl.col("gene_id") == gene["gene_id"]).select("donor", "acceptor").to_numpy()
        np.testing.assert_allclose(got, direct_scores(ensemble, genome, gene), atol=2e-6)


def test_strand_matters(tmp_path, genome, weights):
    """The same span scored on the other strand gives other numbers (the reverse complement is read)."""
    ensemble = load_ensemble(weights)
    both = pl.DataFrame(
        {
            "gene_id": ["p", "m"],
            "chrom": ["c1", "c1"],
            "start": [300, 300],
            "end": [400, 400],
            "strand": ["+", "-"],
        }
    )
    score_genes(ensemble, genome, both, tmp_path / "s.parquet", settings(), progress_every_s=1e9)
    scores = pl.read_parquet(tmp_path / "s.parquet")
    plus, minus = (scores.filter(pl.col("gene_id") == g)["donor"].to_numpy() for g in ("p", "m"))
    assert np.abs(plus - minus).max() > 0.05


def test_regions_merge_close_genes_of_one_strand(genome):
    regions = plan_regions(GENES, genome, merge_gap=36)
    spans = [(r.chrom, r.minus, r.start, r.end, sorted(GENES["gene_id"][list(r.genes)])) for r in regions]
    assert spans == [
        (0, False, 0, 200, ["near_plus", "start_plus"]),
        (0, True, 99, 520, ["long_minus", "overlap_minus"]),  # overlapping
        (0, True, 649, 700, ["end_minus"]),  # 129 nt after the last one: apart
        (1, False, 9, 290, ["other_plus"]),
        (1, True, 149, 150, ["one_nt"]),
    ]
    assert len(plan_regions(GENES, genome, merge_gap=0)) == 6  # only the overlapping pair


def test_writer_joins_parts_in_order(tmp_path):
    frames = [
        pl.DataFrame(
            {
                "gene_id": [f"g{i}"] * 4,
                "chrom": ["c"] * 4,
                "strand": ["+"] * 4,
                "position": np.arange(4, dtype=np.int64) + 10 * i,
                "donor": np.full(4, i, np.float32),
                "acceptor": np.zeros(4, np.float32),
            },
            schema=SCORE_SCHEMA,
        )
        for i in range(5)
    ]
    with ParquetParts(tmp_path / "out.parquet", pl.DataFrame(schema=SCORE_SCHEMA), part_rows=6) as writer:
        for frame in frames:
            writer.add(frame)
        assert len(writer.parts) == 2  # 8 rows, flush; 8 rows, flush; 4 rows left for close
        writer.close()
    assert pl.read_parquet(tmp_path / "out.parquet").equals(pl.concat(frames))
    assert [p.name for p in tmp_path.iterdir()] == ["out.parquet"]  # parts removed
    with pytest.raises(RuntimeError), ParquetParts(tmp_path / "cut.parquet", frames[0]) as writer:
        writer.add(frames[0])
        raise RuntimeError("killed before close")
    assert [p.name for p in tmp_path.iterdir()] == ["out.parquet"]  # no output, no parts


def test_device_choice():
    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    if not torch.cuda.is_available():
        with pytest.raises(InputError, match="calling.base_model.device: cuda, but torch sees no CUDA"):
            resolve_device("cuda")


@pytest.mark.parametrize(
    "change,field,message",
    [
        (lambda f: f.drop("strand"), "column 'strand'", "required column missing"),
        (
            lambda f: f.with_columns(chrom=pl.lit("1")),
            "column 'chrom' row 1",
            "chromosome '1' not in genome; genome has c1, c2",
        ),
        (
            lambda f: f.with_columns(end=pl.col("end") + 400),
            "column 'end' row 3",
            "past the chromosome's end",
        ),
        (lambda f: f.with_columns(strand=pl.lit(".")), "column 'strand' row 1", "strand must be '+' or '-'"),
        (lambda f: f.with_columns(start=pl.col("end") + 1), "column 'end' row 1", "not >= start"),
        (lambda f: f.head(0), "rows", "no genes to score"),
    ],
)
def test_bad_genes_table_is_one_line(tmp_path, genome, change, field, message):
    path = tmp_path / "genes.parquet"
    change(GENES).write_parquet(path)
    with pytest.raises(InputError) as caught:
        read_genes(path, genome)
    assert (
        caught.value.source == str(path) and caught.value.field == field and message in caught.value.message
    )


def test_entry_point_writes_scores_and_logs_rates(tmp_path, genome, weights, capsys):
    genome.save_cached(tmp_path / "genome")
    GENES.write_parquet(tmp_path / "genes.parquet")
    base_model = settings(batch_size=4, chunk_length=50, device="auto").to_completed()
    config = json.dumps({"calling": {"base_model": base_model}})
    out = tmp_path / "base_model" / "scores.parquet"
    score_base_model.main(
        [
            *path_flags(
                {"genes": tmp_path / "genes.parquet", "weights": sorted(weights.glob("*.h5"))},
                {"scores": out},
            ),
            "--genome",
            str(tmp_path / "genome"),
            "--config",
            config,
        ]
    )
    scores = pl.read_parquet(out)
    assert scores.height == int((GENES["end"] - GENES["start"] + 1).sum())
    log = capsys.readouterr().err
    assert "2 models" in log and "score_base_model shard 1 of 1 done: 100.0% (" in log and "7/7 genes)" in log
    assert " nt scored, " in log and " nt/s in " in log


def test_start_annotation_needs_the_model_files(tmp_path, weights):
    from workflow_scripts.config.sections import schema
    from workflow_scripts.config.validate import validate_config
    from workflow_scripts.workflow.preflight import check_calling_inputs

    config = {
        "genome": "g.fa",
        "experiments": [{"name": "e", "error_label": "FN", "correct_label": "TN"}],
        "calling": {"start": "annotation", "annotation": "a.gtf"},
    }
    with pytest.raises(
        InputError, match="config: calling.base_model.weights: calling.start annotation needs"
    ):
        validate_config(config, schema())
    config["calling"]["base_model"] = {"weights": str(weights)}
    assert validate_config(config, schema())["calling"]["base_model"]["batch_size"] >= 1
    calling = {
        "start": "annotation",
        "base_model": {"weights": [str(weights / "model1.h5"), str(tmp_path / "x.h5")]},
    }
    with pytest.raises(InputError, match=r"x.h5: calling.base_model.weights: file not found"):
        check_calling_inputs(calling)
    check_calling_inputs({"start": "annotation", "base_model": {"weights": str(weights)}})
