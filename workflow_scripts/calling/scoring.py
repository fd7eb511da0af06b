"""Base-model scores: a SpliceAI-family ensemble run over every selected gene, on its strand.

Every gene position is scored with the model's full context of real sequence around it (5,000 nt
each side for SpliceAI-10k); only past a chromosome end is the input N (all-zero one-hot). A
minus-strand gene is read reverse-complemented, as the model was trained on transcripts, and its
scores are turned back into genome order. The ensemble's probabilities are the mean over its
models (SpliceAI's own averaging).

How the work is cut: genes on the same chromosome and strand that lie less than one context apart
are scored as one region (scoring the gap costs less than a second pair of flanks), and regions are
cut into the fewest chunks of one length (so the last is not mostly past the region's end): one
chunk up to `chunk_length` scored positions, and a longer region into chunks of up to what a
whole batch holds (batch_size × (chunk_length + context) nt read), so that long genes read fewer
flanks in the same memory. Each chunk is read with its flanks, batched `batch_size` at a time (longer
chunks as many as fit); on a GPU chunk lengths are multiples of CUDA_CHUNK_STEP and chunks of one
length are batched together across a block of regions, so that the many short genes fill whole
batches. A position's score depends only on the sequence around it, so the cutting changes no score
(tests/unit/test_scoring.py checks this against one pass over each whole gene).

How the host keeps out of the device's way (docs/performance.md, "host feed"): a batch travels as
the genome's bytes and becomes a one-hot on the device (model_input.py); on a GPU it is queued
with asynchronous copies from and to page-locked memory while the host prepares the next batches
and scatters finished ones (batch_runner.py); the rows of the table are made and written to
parquet on a writer thread (score_writer.py). tests/unit/test_scoring_overlap.py checks that this
gives the table of a plain gene-by-gene pass.

A whole genome is scored in shards (calling.base_model.shards): every job plans the same regions,
splits them with calling/shards.py and scores only its own shard, so shards run as separate jobs
(one GPU each on SLURM) and make_calls gathers their tables.

Output: a scores table per shard, one row per gene position (a position inside two overlapping genes of one
strand is a row of each): gene_id, chrom, strand, position (1-based), donor, acceptor (float32).
Why parquet: it is the same table format users give when they bring their own model's scores
(`calling.scores`), it is typed (Int64 positions and float32 probabilities come back exactly, no
text parsing) and columnar (calls reads only the columns it needs, compressed). Rows are streamed into the
file as regions finish, so memory stays bounded on a whole genome, and the file appears only when
complete (io_utils.atomic_path).
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import cast

import numpy as np
import polars as pl
import torch

from workflow_scripts.calling import batch_runner
from workflow_scripts.calling.batch_runner import BatchRunner, Launched
from workflow_scripts.calling.contract import SCORE_COLUMNS
from workflow_scripts.calling.device import precision_dtype, resolve_device
from workflow_scripts.calling.regions import Region, plan_regions
from workflow_scripts.calling.score_writer import ScoreWriter
from workflow_scripts.calling.shards import plan_shards
from workflow_scripts.calling.spliceai import SpliceAIEnsemble
from workflow_scripts.calling.stage_times import StageTimes
from workflow_scripts.config.types import BaseModelSection
from workflow_scripts.data.genome import Genome
from workflow_scripts.progress import Console, Progress, announce

SCORE_SCHEMA = {
    "gene_id": pl.String,
    "chrom": pl.String,
    "strand": pl.String,
    "position": pl.Int64,
    "donor": pl.Float32,
    "acceptor": pl.Float32,
}
assert tuple(SCORE_SCHEMA) == SCORE_COLUMNS
N_BYTE = ord("N")
CUDA_CHUNK_STEP = 5000  # on a GPU chunk lengths are multiples of this: few shapes for cuDNN to tune
BLOCK_BATCHES = 8  # on a GPU, regions are batched by chunk length over blocks of this many full batches


def fill_window(window: np.ndarray, genome: Genome, chrom: int, start: int) -> None:
    """Write bases [start, start + len(window)) of a chromosome into `window` (uint8); positions
    outside the chromosome are N."""
    end = start + len(window)
    inside_start, inside_end = max(start, 0), min(end, int(genome.lengths[chrom]))
    if inside_end <= inside_start:
        window[:] = N_BYTE
        return
    window[: inside_start - start] = N_BYTE
    window[inside_end - start :] = N_BYTE
    offset = int(genome.offsets[chrom])
    window[inside_start - start : inside_end - start] = genome.sequence[
        offset + inside_start : offset + inside_end
    ]


class RegionScorer:
    """Chunks regions, runs the ensemble batch by batch (batch_runner.py: `in_flight` batches
    queued ahead of the one being read, by default DEPTH_ON_CUDA on a GPU and none on a CPU),
    hands back each finished region's scores. `plan_for`: the device type whose chunk plan to use (default: the device's;
    the host benchmark plans as on a GPU while it runs on the CPU)."""

    def __init__(
        self,
        ensemble: SpliceAIEnsemble,
        genome: Genome,
        device: torch.device,
        batch_size: int,
        chunk_length: int,
        precision: str = "fp32",
        in_flight: int | None = None,
        plan_for: str | None = None,
    ):
        self.ensemble = ensemble.to(device)
        if device.type == "cuda":
            torch.backends.cudnn.allow_tf32 = False  # fp32 as Keras computed it (TF32 shifts ~1e-3)
            torch.backends.cudnn.benchmark = True  # few chunk shapes (CUDA_CHUNK_STEP): tune each once
        self.dtype = precision_dtype(precision, device)
        self.genome, self.device = genome, device
        self.batch_size, self.chunk_length = batch_size, chunk_length
        gpu_plan = (plan_for or device.type) == "cuda"
        self.chunk_step = CUDA_CHUNK_STEP if gpu_plan else 1
        self.block_nt = BLOCK_BATCHES * batch_size * chunk_length if gpu_plan else 0
        # nn.Module's attributes read as tensors or modules to mypy: the flanks are ints
        self.flank_left, self.flank_right = cast(int, ensemble.flank_left), cast(int, ensemble.flank_right)
        self.context = self.flank_left + self.flank_right
        self.batch_input_nt = batch_size * (chunk_length + self.context)
        if in_flight is None:
            in_flight = batch_runner.DEPTH_ON_CUDA if device.type == "cuda" else batch_runner.DEPTH_ON_CPU
        self.times = StageTimes()
        self.runner = BatchRunner(
            self.ensemble,
            self.context,
            device,
            self.dtype,
            batch_size,
            self.batch_input_nt,
            in_flight,
            self.times,
        )
        self.on_batch: Callable[[int], None] = lambda input_nt: None  # progress: the nt a batch read

    def chunk_genome_start(self, region: Region, offset: int) -> int:
        if region.minus:  # chunk 0 holds the region's right end (the transcript's start)
            return region.end - offset - self.chunk_size(region)
        return region.start + offset

    def chunk_size(self, region: Region) -> int:
        """The fewest chunks that cover the region, of one length (rounded up to chunk_step): the
        last chunk is not mostly past the region's end. A region of at most chunk_length is one
        chunk; a longer one is cut into chunks of up to what a whole batch holds (batch_size ×
        (chunk_length + context) nt read, less one context): fewer flanks read per scored nt, in
        the memory of a batch (docs/performance.md)."""
        length = region.end - region.start
        limit = self.chunk_length if length <= self.chunk_length else self.long_chunk
        even = -(-length // -(-length // limit))
        return min(limit, -(-even // self.chunk_step) * self.chunk_step)

    @property
    def long_chunk(self) -> int:
        fits = (self.batch_input_nt - self.context) // self.chunk_step * self.chunk_step
        return max(self.chunk_length, fits)

    def chunks_per_batch(self, size: int) -> int:
        """batch_size chunks of up to chunk_length; longer ones as many as the batch's nt allow."""
        if size <= self.chunk_length:
            return self.batch_size
        return max(1, self.batch_input_nt // (size + self.context))

    def chunk_starts(self, region: Region) -> range:
        return range(0, region.end - region.start, self.chunk_size(region))

    def input_nt(self, regions: list[Region]) -> int:
        """Nucleotides the model reads for these regions: every chunk with its flanks."""
        return sum(len(self.chunk_starts(r)) * (self.chunk_size(r) + self.context) for r in regions)

    def blocks(self, regions: list[Region]):
        """Runs of consecutive region indices holding at least block_nt positions (one region at least)."""
        block: list[int] = []
        block_nt = 0
        for index, region in enumerate(regions):
            block.append(index)
            block_nt += region.end - region.start
            if block_nt >= self.block_nt:
                yield block
                block, block_nt = [], 0
        if block:
            yield block

    def batches(self, regions: list[Region]):
        """Yield (chunks [(region index, offset)], chunk size): every chunk of every region once.
        A batch holds chunks of one length; within a block the chunks are batched by length, so
        that on a GPU (few lengths, CUDA_CHUNK_STEP) short regions fill whole batches."""
        for block in self.blocks(regions):
            chunks = sorted(
                (self.chunk_size(regions[index]), index, offset)
                for index in block
                for offset in self.chunk_starts(regions[index])
            )
            for size, same_length in itertools.groupby(chunks, key=lambda chunk: chunk[0]):
                same = [(index, offset) for _, index, offset in same_length]
                per_batch = self.chunks_per_batch(size)
                for first in range(0, len(same), per_batch):
                    yield same[first : first + per_batch], size

    def scores(self, regions: list[Region]):
        """Yield (region, float32 array (2, region length): donor, acceptor), in the order of
        `regions`, as each is finished. The host gathers a batch's bases and scatters finished
        batches' scores while the device runs the batches queued after them."""
        chunks_left = [len(self.chunk_starts(region)) for region in regions]
        pending: dict[int, np.ndarray] = {}
        next_out = 0
        for chunks, size in self.batches(regions):
            self.stage(regions, chunks, size)
            with self.times("launch"):
                finished = self.runner.launch(chunks, size + self.context)
            for launched in finished:
                self.scatter(regions, launched, pending, chunks_left)
            while next_out < len(regions) and chunks_left[next_out] == 0:
                yield regions[next_out], pending.pop(next_out)
                next_out += 1
        for launched in self.runner.drain():
            self.scatter(regions, launched, pending, chunks_left)
        while next_out < len(regions):
            yield regions[next_out], pending.pop(next_out)
            next_out += 1

    def stage(self, regions: list[Region], chunks: list, size: int) -> None:
        """A batch's bases in genome order (each chunk with its flanks) and strands, into the runner's slot."""
        with self.times("bases"):
            left, right = self.flank_left, self.flank_right
            codes, minus = self.runner.stage(len(chunks), size + left + right)
            for row, (index, offset) in enumerate(chunks):
                region = regions[index]
                before = right if region.minus else left  # the model reads a minus chunk right to left
                fill_window(
                    codes[row], self.genome, region.chrom, self.chunk_genome_start(region, offset) - before
                )
                minus[row] = region.minus

    def scatter(
        self, regions: list[Region], launched: Launched, pending: dict, chunks_left: list[int]
    ) -> None:
        """A finished batch's scores into their regions' arrays, in genome order: donor, acceptor."""
        with self.times("scatter"):
            for (index, offset), chunk, minus in zip(launched.chunks, launched.scores, launched.minus):
                region = regions[index]
                length = region.end - region.start
                if index not in pending:
                    pending[index] = np.empty((2, length), dtype=np.float32)  # the chunks cover every column
                # the batch's channels are acceptor, donor in the model's reading order
                in_genome_order = chunk[::-1, ::-1] if minus else chunk[::-1]
                first = self.chunk_genome_start(region, offset) - region.start
                keep = slice(max(first, 0), min(first + in_genome_order.shape[1], length))
                pending[index][:, keep] = in_genome_order[:, keep.start - first : keep.stop - first]
                chunks_left[index] -= 1
        self.on_batch(launched.input_nt)


def score_genes(
    ensemble: SpliceAIEnsemble,
    genome: Genome,
    genes: pl.DataFrame,
    out: str | Path,
    settings: BaseModelSection,
    progress_every_s: float = 30.0,
    shard: tuple[int, int] = (1, 1),
    console: Console | None = None,
    plan_for: str | None = None,
) -> dict:
    """Score the genes of shard `shard` = (i, n), 1-based (calling/shards.py), of `genes` (gene_id,
    chrom, start, end, strand; checked) into `out`; (1, 1) scores every gene. `settings`: the
    typed calling.base_model (its device, batch_size, chunk_length and precision). Progress goes to
    stderr every `progress_every_s` and to `console` (workflow_scripts/progress.py). The summary
    says where the host's time went: `stages`, wall seconds (RegionScorer.times and the writer's),
    and `stages_cpu`, CPU seconds per stage of the thread that runs it."""
    index, count = shard
    device = resolve_device(settings.device)
    scorer = RegionScorer(
        ensemble,
        genome,
        device,
        settings.batch_size,
        settings.chunk_length,
        settings.precision,
        plan_for=plan_for,
    )
    planned = plan_regions(genes, genome, merge_gap=ensemble.context)
    regions = plan_shards(planned, count)[index - 1]
    rows = [row for region in regions for row in region.genes]
    total_nt = int((genes["end"] - genes["start"] + 1).gather(rows).sum())
    label = f"score_base_model shard {index} of {count}"
    print(
        f"{label}: {len(rows):,} of {genes.height:,} genes ({total_nt:,} nt) in {len(regions):,} of "
        f"{len(planned):,} regions, {ensemble.count_text}, context "
        f"{ensemble.flank_left}+{ensemble.flank_right} nt, device {device}, "
        f"batch {settings.batch_size} x {settings.chunk_length:,} nt",
        file=sys.stderr,
    )
    announce(console, label, f"{len(rows):,} genes ({total_nt:,} nt) on {device}")
    progress = Progress(
        label,
        scorer.input_nt(regions),
        "input nt",
        tallies={"genes": len(rows)},
        shown=("nt", total_nt),  # the share of the nt read (with flanks) as the genes' nt
        console=console,
        log_every_s=progress_every_s,
    )
    # the time left from the nt the model read, with flanks: on the CPU after each model of the
    # ensemble (a batch of a long region takes minutes there), on a GPU as each batch is read back
    if device.type == "cpu":
        ensemble.after_model = lambda x: progress.advance(x.shape[0] * x.shape[-1] / len(ensemble.members))
    else:
        scorer.on_batch = progress.advance
    spans = genes.select("gene_id", "start", "end", "strand")
    scored_nt = 0
    with ScoreWriter(out, spans, genome.names, SCORE_SCHEMA) as writer, progress.keep_alive():
        for region, scores in scorer.scores(regions):
            with scorer.times("hand-over"):
                scored_nt += writer.add(region, scores)
            progress.advance(0, genes=len(region.genes))
        with scorer.times("writer finishing"):
            writer.close()
    ensemble.after_model = None
    done = {**progress.finish(), "gene_nt": scored_nt}
    seconds = max(done["seconds"], 1e-9)
    stages = {**scorer.times.seconds, **writer.seconds}
    print(
        f"{label} host seconds by stage: {', '.join(f'{k} {v:.2f}' for k, v in stages.items())}",
        file=sys.stderr,
    )
    return {
        "genes": done["genes"],
        "nt": done["gene_nt"],
        "seconds": round(seconds, 2),
        "genes_per_s": done["genes"] / seconds,
        "nt_per_s": done["gene_nt"] / seconds,
        "device": str(device),
        "regions": len(regions),
        "chunks": sum(len(scorer.chunk_starts(r)) for r in regions),
        "input_nt": scorer.input_nt(regions),
        "stages": stages,
        "stages_cpu": {**scorer.times.cpu_seconds, "writer: rows": writer.rows_cpu_s},
    }
