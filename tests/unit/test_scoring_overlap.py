"""score_base_model's overlapped path gives the plain path's table: the batches' staging slots and
batches in flight (calling/batch_runner.py), the one-hot made on the device (model_input.py), the
writer thread and its streamed parquet (score_writer.py), the GPU's chunk plan and longer chunks.

The plain path is `plain_table` below: every gene of the shard, in region and gene order, scored by
one forward pass over the whole gene with its flanks (test_scoring.direct_scores, built from a
Python string) and its rows made one by one. Both strands, chunk edges inside genes, several
regions per batch, chromosome ends, overlapping genes, shards. On a machine with CUDA the same
cases run on the GPU (page-locked slots, asynchronous copies, events)."""

from __future__ import annotations

import threading

import numpy as np
import polars as pl
import pytest
import torch

from tests.unit.test_scoring import GENES, direct_scores, settings
from workflow_scripts.calling import batch_runner, score_writer, scoring
from workflow_scripts.calling.batch_runner import BatchRunner
from workflow_scripts.calling.model_input import one_hot_strands
from workflow_scripts.calling.regions import plan_regions
from workflow_scripts.calling.scoring import SCORE_SCHEMA, score_genes
from workflow_scripts.calling.shards import plan_shards
from workflow_scripts.calling.spliceai import load_ensemble, one_hot

pytest_plugins = ["tests.unit.test_scoring"]  # its genome and weights fixtures
DEVICES = [
    "cpu",
    pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA")),
]
COMPLEMENT = bytes.maketrans(b"ACGTNacgtn", b"TGCANtgcan")


def plain_table(ensemble, genome, genes: pl.DataFrame, shard: tuple[int, int]) -> pl.DataFrame:
    """The shard's rows, one gene at a time, each gene scored by one direct pass."""
    regions = plan_shards(plan_regions(genes, genome, merge_gap=ensemble.context), shard[1])[shard[0] - 1]
    frames = [pl.DataFrame(schema=SCORE_SCHEMA)]
    for region in regions:
        for row in region.genes:
            gene = genes.row(row, named=True)
            scores = direct_scores(ensemble, genome, gene)
            length = gene["end"] - gene["start"] + 1
            frames.append(
                pl.DataFrame(
                    {
                        "gene_id": [gene["gene_id"]] * length,
                        "chrom": [gene["chrom"]] * length,
                        "strand": [gene["strand"]] * length,
                        "position": range(gene["start"], gene["end"] + 1),
                        "donor": scores[:, 0],
                        "acceptor": scores[:, 1],
                    },
                    schema=SCORE_SCHEMA,
                )
            )
    return pl.concat(frames)


def assert_same_table(got: pl.DataFrame, expected: pl.DataFrame) -> None:
    assert dict(got.schema) == SCORE_SCHEMA
    keys = ["gene_id", "chrom", "strand", "position"]
    assert got.select(keys).equals(expected.select(keys))  # the same rows in the same order
    np.testing.assert_allclose(
        got.select("donor", "acceptor").to_numpy(), expected.select("donor", "acceptor").to_numpy(), atol=2e-6
    )


CASES = {  # batch_size, chunk_length, batches in flight, plan as on a GPU (steps of 8), shard
    "chunk edges inside genes": (3, 32, 0, False, (1, 1)),
    "one chunk per batch, two in flight": (1, 16, 2, False, (1, 1)),
    "GPU plan: regions batched by length, in flight": (4, 24, 2, True, (1, 1)),
    "long chunks (a batch's nt)": (4, 40, 1, False, (1, 1)),
    "shard 2 of 3, in flight": (2, 32, 3, True, (2, 3)),
    "shard 1 of 2": (3, 150, 1, False, (1, 2)),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", list(CASES))
def test_overlapped_scoring_gives_the_plain_table(tmp_path, genome, weights, monkeypatch, device, case):
    batch_size, chunk_length, in_flight, gpu_plan, shard = CASES[case]
    monkeypatch.setattr(batch_runner, "DEPTH_ON_CPU", in_flight)
    monkeypatch.setattr(batch_runner, "DEPTH_ON_CUDA", in_flight)
    monkeypatch.setattr(scoring, "CUDA_CHUNK_STEP", 8)  # the GPU's rounding, at the test genome's scale
    monkeypatch.setattr(score_writer, "BUNDLE_ROWS", 100)  # many bundles through a short queue
    monkeypatch.setattr(score_writer, "QUEUED_BUNDLES", 1)
    ensemble = load_ensemble(weights)
    out = tmp_path / "scores.parquet"
    run = settings(batch_size, chunk_length, device)
    summary = score_genes(
        ensemble, genome, GENES, out, run, 1e9, shard=shard, plan_for="cuda" if gpu_plan else None
    )
    expected = plain_table(load_ensemble(weights), genome, GENES, shard)
    assert summary["nt"] == expected.height > 0
    assert_same_table(pl.read_parquet(out), expected)
    assert [path.name for path in tmp_path.iterdir()] == ["scores.parquet"]


def test_long_regions_read_fewer_flanks(tmp_path, genome, weights):
    """A region longer than chunk_length is one chunk of a batch's nt, not several with their flanks."""
    ensemble = load_ensemble(weights)
    summary = score_genes(ensemble, genome, GENES, tmp_path / "s.parquet", settings(4, 40), 1e9)
    one_per_batch = score_genes(ensemble, genome, GENES, tmp_path / "t.parquet", settings(1, 40), 1e9)
    assert summary["chunks"] < one_per_batch["chunks"]
    assert summary["input_nt"] < one_per_batch["input_nt"]


@pytest.mark.parametrize("device", DEVICES)
def test_one_hot_on_the_device_is_the_reverse_complement_on_the_minus_strand(device):
    text = b"ACGTNacgtnAAGGCT"
    rows = [text, text[::-1]]
    codes = torch.tensor([list(row) for row in rows], dtype=torch.uint8)
    minus = torch.tensor([False, True])
    got = one_hot_strands(codes.to(device), minus.to(device)).cpu()
    expected_minus = torch.tensor([list(rows[1].translate(COMPLEMENT)[::-1])], dtype=torch.uint8)
    assert torch.equal(got[0], one_hot(codes[:1])[0])
    assert torch.equal(got[1], one_hot(expected_minus)[0])
    assert got.dtype == torch.float32 and got.is_contiguous()


class Echo(torch.nn.Module):
    """A model whose 'scores' are its input: acceptor = the C channel, donor = the G channel."""

    flank_left = flank_right = 2

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x[:, :3, self.flank_left : x.shape[2] - self.flank_right].clone()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("depth", [0, 1, 3])
def test_batches_in_flight_come_back_in_order_each_with_its_own_scores(device, depth):
    """Each batch is read `depth` launches later, in order, and its slot still holds its own
    scores then (a slot is refilled only after its batch was read)."""
    runner = BatchRunner(
        Echo(), 4, torch.device(device), torch.float32, max_chunks=3, max_input_nt=3 * 12, depth=depth
    )
    rng = np.random.default_rng(0)
    staged, read = [], []
    for batch in range(9):
        rows, length = 1 + batch % 3, 8 + batch % 5
        codes, minus = runner.stage(rows, length)
        codes[:] = rng.choice(np.frombuffer(b"ACGT", np.uint8), size=(rows, length))
        minus[:] = rng.random(rows) < 0.5
        staged.append((batch, codes.copy(), minus.copy()))
        finished = runner.launch([batch] * rows, length)
        assert len(finished) == (1 if batch >= depth else 0)
        read += [(launched.chunks[0], launched.scores.copy()) for launched in finished]
    read += [(launched.chunks[0], launched.scores.copy()) for launched in runner.drain()]
    assert [batch for batch, _ in read] == list(range(9))
    for (batch, codes, minus), (_, scores) in zip(staged, read):
        model_order = np.where(minus[:, None], codes[:, ::-1], codes)[:, 2:-2]
        model_order = np.where(minus[:, None], bytes_complement(model_order), model_order)
        assert np.array_equal(scores[:, 0], model_order == ord("C")), batch  # acceptor: channel C
        assert np.array_equal(scores[:, 1], model_order == ord("G")), batch  # donor: channel G


def bytes_complement(codes: np.ndarray) -> np.ndarray:
    table = np.arange(256, dtype=np.uint8)
    table[np.frombuffer(b"ACGT", np.uint8)] = np.frombuffer(b"TGCA", np.uint8)
    return table[codes]


def writer_threads() -> list[str]:
    return [thread.name for thread in threading.enumerate() if thread.name == "score-writer"]


def test_a_failure_while_scoring_stops_the_writer_and_leaves_no_output(
    tmp_path, genome, weights, monkeypatch
):
    monkeypatch.setattr(score_writer, "BUNDLE_ROWS", 50)  # some bundles written before the failure
    launches = []
    launch = BatchRunner.launch

    def failing(runner, chunks, input_length):
        launches.append(input_length)
        if len(launches) == 4:
            raise RuntimeError("CUDA error: out of memory")
        return launch(runner, chunks, input_length)

    monkeypatch.setattr(BatchRunner, "launch", failing)
    with pytest.raises(RuntimeError, match="out of memory"):
        score_genes(load_ensemble(weights), genome, GENES, tmp_path / "scores.parquet", settings(1, 32), 1e9)
    assert list(tmp_path.iterdir()) == [] and writer_threads() == []


def test_a_failure_while_writing_is_raised_in_the_scorer_and_leaves_no_output(tmp_path, genome, weights):
    (tmp_path / "taken").write_text("a file where the output's folder should be")
    with pytest.raises(OSError):
        score_genes(
            load_ensemble(weights), genome, GENES, tmp_path / "taken" / "scores.parquet", settings(), 1e9
        )
    assert [path.name for path in tmp_path.iterdir()] == ["taken"] and writer_threads() == []


def test_an_empty_shard_writes_an_empty_table(tmp_path, genome, weights):
    out = tmp_path / "scores.parquet"
    summary = score_genes(load_ensemble(weights), genome, GENES, out, settings(), 1e9, shard=(9, 9))
    table = pl.read_parquet(out)
    assert summary["nt"] == table.height == 0 and dict(table.schema) == SCORE_SCHEMA


def test_a_killed_writers_leftovers_are_removed_by_the_next_run(tmp_path, genome, weights):
    """SIGKILL leaves atomic_path's half-written temporary file (or, before the writer thread,
    a parts folder); the next run of the same output removes them and leaves only the table."""
    out = tmp_path / "2-of-3.parquet"
    (tmp_path / ".2-of-3.parquet.x1y2.tmp").write_bytes(b"half a parquet file")
    (tmp_path / ".2-of-3.parquet.parts.abc").mkdir()
    (tmp_path / ".1-of-3.parquet.z9.tmp").write_bytes(b"another shard's, still being written")
    score_genes(load_ensemble(weights), genome, GENES, out, settings(), 1e9, shard=(2, 3))
    assert sorted(path.name for path in tmp_path.iterdir()) == [".1-of-3.parquet.z9.tmp", "2-of-3.parquet"]
