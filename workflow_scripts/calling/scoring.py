"""Base-model scores: a SpliceAI-family ensemble run over every selected gene, on its strand.

Every gene position is scored with the model's full context of real sequence around it (5,000 nt
each side for SpliceAI-10k); only past a chromosome end is the input N (all-zero one-hot). A
minus-strand gene is read reverse-complemented, as the model was trained on transcripts, and its
scores are turned back into genome order. The ensemble's probabilities are the mean over its
models (SpliceAI's own averaging).

How the work is cut: genes on the same chromosome and strand that lie less than one context apart
are scored as one region (scoring the gap costs less than a second pair of flanks), and regions are
cut into the fewest chunks of at most `chunk_length` scored positions, all of one length (so the
last is not mostly past the region's end), each read with its flanks, batched `batch_size` at a
time; on a GPU chunk lengths are multiples of CUDA_CHUNK_STEP and chunks of one length are batched
together across a block of regions, so that the many short genes fill whole batches. A position's score depends only on the sequence around it, so the cutting
changes no score (tests/unit/test_scoring.py checks this against one pass over each whole gene).

A whole genome is scored in shards (calling.base_model.shards): every job plans the same regions,
splits them with calling/shards.py and scores only its own shard, so shards run as separate jobs
(one GPU each on SLURM) and make_calls gathers their tables.

Output: a scores table per shard, one row per gene position (a position inside two overlapping genes of one
strand is a row of each): gene_id, chrom, strand, position (1-based), donor, acceptor (float32).
Why parquet: it is the same table format users give when they bring their own model's scores
(`calling.scores`), it is typed (Int64 positions and float32 probabilities come back exactly, no
text parsing) and columnar (calls reads only the columns it needs, compressed). Rows are written
in parts and joined at the end, so memory stays bounded on a whole genome, and the file appears
only when complete (io_utils.atomic_path).
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import polars as pl
import torch

from workflow_scripts.calling.contract import SCORE_COLUMNS
from workflow_scripts.calling.regions import Region, plan_regions
from workflow_scripts.calling.shards import plan_shards
from workflow_scripts.calling.spliceai import ACCEPTOR, DONOR, SpliceAIEnsemble, one_hot
from workflow_scripts.data.genome import Genome
from workflow_scripts.data.tables import ParquetParts
from workflow_scripts.errors import InputError
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


def resolve_device(name: str) -> torch.device:
    if name == "cuda" and not torch.cuda.is_available():
        raise InputError(
            "config",
            "calling.base_model.device",
            "cuda, but torch sees no CUDA device here (use auto or cpu)",
        )
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    return torch.device(name)


PRECISIONS = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}


def precision_dtype(precision: str, device: torch.device) -> torch.dtype:
    """The convolutions' dtype under autocast (the output layer and the ensemble mean stay fp32)."""
    if precision != "fp32" and not fast_on(precision, device):
        where = "a CPU without AVX-512/AMX" if device.type == "cpu" else "a GPU without bf16"
        raise InputError(
            "config",
            "calling.base_model.precision",
            f"{precision} on {where} runs emulated, ~10x slower than fp32 (docs/performance.md); "
            "use fp32 here",
        )
    return PRECISIONS[precision]


def fast_on(precision: str, device: torch.device) -> bool:
    if device.type == "cuda":
        return precision == "fp16" or torch.cuda.is_bf16_supported(including_emulation=False)
    if precision == "bf16":
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    return bool(torch.ops.mkldnn._is_mkldnn_fp16_supported())


def read_window(genome: Genome, chrom: int, start: int, end: int) -> np.ndarray:
    """Bases [start, end) of a chromosome as uint8; positions outside the chromosome are N."""
    window = np.full(end - start, N_BYTE, dtype=np.uint8)
    inside_start, inside_end = max(start, 0), min(end, int(genome.lengths[chrom]))
    if inside_end > inside_start:
        offset = int(genome.offsets[chrom])
        window[inside_start - start : inside_end - start] = genome.sequence[
            offset + inside_start : offset + inside_end
        ]
    return window


class RegionScorer:
    """Chunks regions, runs the ensemble batch by batch, hands back each finished region's scores."""

    def __init__(
        self,
        ensemble: SpliceAIEnsemble,
        genome: Genome,
        device: torch.device,
        batch_size: int,
        chunk_length: int,
        precision: str = "fp32",
    ):
        self.ensemble = ensemble.to(device)
        if device.type == "cuda":
            torch.backends.cudnn.allow_tf32 = False  # fp32 as Keras computed it (TF32 shifts ~1e-3)
            torch.backends.cudnn.benchmark = True  # few chunk shapes (CUDA_CHUNK_STEP): tune each once
        self.dtype = precision_dtype(precision, device)
        self.genome, self.device = genome, device
        self.batch_size, self.chunk_length = batch_size, chunk_length
        self.chunk_step = CUDA_CHUNK_STEP if device.type == "cuda" else 1
        self.block_nt = BLOCK_BATCHES * batch_size * chunk_length if device.type == "cuda" else 0
        self.on_batch: Callable[[int], None] = lambda input_nt: None  # progress: the nt a batch read

    def chunk_input(self, region: Region, offset: int) -> np.ndarray:
        """The chunk's bases in genome order; its first scored position is chunk_genome_start."""
        first = self.chunk_genome_start(region, offset)
        left, right = self.ensemble.flank_left, self.ensemble.flank_right
        if region.minus:  # the model reads right to left: its left flank lies to our right
            left, right = right, left
        return read_window(self.genome, region.chrom, first - left, first + self.chunk_size(region) + right)

    def chunk_genome_start(self, region: Region, offset: int) -> int:
        if region.minus:  # chunk 0 holds the region's right end (the transcript's start)
            return region.end - offset - self.chunk_size(region)
        return region.start + offset

    def chunk_size(self, region: Region) -> int:
        """The fewest chunks of at most chunk_length that cover the region, of one length (rounded up
        to chunk_step): the last chunk is not mostly past the region's end (docs/performance.md)."""
        length = region.end - region.start
        even = -(-length // -(-length // self.chunk_length))
        return min(self.chunk_length, -(-even // self.chunk_step) * self.chunk_step)

    def chunk_starts(self, region: Region) -> range:
        return range(0, region.end - region.start, self.chunk_size(region))

    def input_nt(self, regions: list[Region]) -> int:
        """Nucleotides the model reads for these regions: every chunk with its flanks."""
        return sum(len(self.chunk_starts(r)) * (self.chunk_size(r) + self.ensemble.context) for r in regions)

    def run(self, codes: np.ndarray, minus: np.ndarray) -> np.ndarray:
        """(batch, input length) bases in genome order → (batch, 2, chunk size) donor, acceptor in genome order."""
        x = one_hot(torch.from_numpy(codes).to(self.device))
        flip = torch.from_numpy(minus).to(self.device)
        x = torch.where(flip[:, None, None], x.flip(1, 2), x)  # reverse complement: ACGT → TGCA, 3' → 5'
        reduced = self.dtype != torch.float32
        with torch.inference_mode(), torch.autocast(self.device.type, self.dtype, enabled=reduced):
            probabilities = self.ensemble(x)[:, [DONOR, ACCEPTOR]]
        probabilities = torch.where(flip[:, None, None], probabilities.flip(2), probabilities)
        scores = probabilities.float().cpu().numpy()
        self.on_batch(codes.size)
        return scores

    def blocks(self, regions: list[Region]):
        """Runs of consecutive regions holding at least block_nt positions (one region at least)."""
        block, block_nt = [], 0
        for region in regions:
            block.append(region)
            block_nt += region.end - region.start
            if block_nt >= self.block_nt:
                yield block
                block, block_nt = [], 0
        if block:
            yield block

    def scores(self, regions: list[Region]):
        """Yield (region, float32 array (2, region length): donor, acceptor), in the order of `regions`.
        A batch holds chunks of one length; within a block the chunks are batched by length, so that
        on a GPU (few lengths, CUDA_CHUNK_STEP) short regions fill whole batches."""
        for block in self.blocks(regions):
            pending = {
                index: (
                    np.zeros((2, region.end - region.start), dtype=np.float32),
                    len(self.chunk_starts(region)),
                )
                for index, region in enumerate(block)
            }
            chunks = sorted(
                (self.chunk_size(region), index, offset)
                for index, region in enumerate(block)
                for offset in self.chunk_starts(region)
            )
            next_out = 0
            for _, same_length in itertools.groupby(chunks, key=lambda chunk: chunk[0]):
                same = [(index, offset) for _, index, offset in same_length]
                for first in range(0, len(same), self.batch_size):
                    self.score_batch(same[first : first + self.batch_size], block, pending)
                    while next_out < len(block) and pending[next_out][1] == 0:
                        yield block[next_out], pending.pop(next_out)[0]
                        next_out += 1

    def score_batch(self, batch, regions, pending) -> None:
        codes = np.stack([self.chunk_input(regions[i], offset) for i, offset in batch])
        minus = np.array([regions[i].minus for i, _ in batch])
        output = self.run(codes, minus)
        for (index, offset), chunk in zip(batch, output):
            region = regions[index]
            scores, left = pending[index]
            first = self.chunk_genome_start(region, offset) - region.start
            keep = slice(max(first, 0), min(first + self.chunk_size(region), region.end - region.start))
            scores[:, keep] = chunk[:, keep.start - first : keep.stop - first]
            pending[index] = (scores, left - 1)


SCORE_PART_ROWS = 4_000_000  # rows gathered per parquet part (~100 MB of scores)


def gene_rows(genes: pl.DataFrame, region: Region, scores: np.ndarray, genome: Genome) -> pl.DataFrame:
    """One row per position of each of the region's genes."""
    frames = []
    for row in region.genes:
        gene_id, start, end, strand = genes.row(row)[:4]
        part = scores[:, start - 1 - region.start : end - region.start]
        frames.append(
            pl.DataFrame(
                {
                    "gene_id": pl.repeat(gene_id, end - start + 1, dtype=pl.String, eager=True),
                    "chrom": pl.repeat(
                        genome.names[region.chrom], end - start + 1, dtype=pl.String, eager=True
                    ),
                    "strand": pl.repeat(strand, end - start + 1, dtype=pl.String, eager=True),
                    "position": np.arange(start, end + 1, dtype=np.int64),
                    "donor": part[0],
                    "acceptor": part[1],
                },
                schema=SCORE_SCHEMA,
            )
        )
    return pl.concat(frames)


def score_genes(
    ensemble: SpliceAIEnsemble,
    genome: Genome,
    genes: pl.DataFrame,
    out: str | Path,
    settings: dict,
    progress_every_s: float = 30.0,
    shard: tuple[int, int] = (1, 1),
    console: Console | None = None,
) -> dict:
    """Score the genes of shard `shard` = (i, n), 1-based (calling/shards.py), of `genes` (gene_id,
    chrom, start, end, strand; checked) into `out`; (1, 1) scores every gene. Progress goes to
    stderr every `progress_every_s` and to `console` (workflow_scripts/progress.py)."""
    index, count = shard
    device = resolve_device(settings["device"])
    scorer = RegionScorer(
        ensemble, genome, device, settings["batch_size"], settings["chunk_length"], settings["precision"]
    )
    planned = plan_regions(genes, genome, merge_gap=ensemble.context)
    regions = plan_shards(planned, count)[index - 1]
    spans = genes.select(gene_id="gene_id", start="start", end="end", strand="strand")
    rows = [row for region in regions for row in region.genes]
    total_nt = int((genes["end"] - genes["start"] + 1).gather(rows).sum())
    label = f"score_base_model shard {index} of {count}"
    print(
        f"{label}: {len(rows):,} of {genes.height:,} genes ({total_nt:,} nt) in {len(regions):,} of "
        f"{len(planned):,} regions, {len(ensemble.models)} models, context "
        f"{ensemble.flank_left}+{ensemble.flank_right} nt, device {device}, "
        f"batch {settings['batch_size']} x {settings['chunk_length']:,} nt",
        file=sys.stderr,
    )
    announce(console, label, f"{len(rows):,} genes ({total_nt:,} nt) on {device}")
    progress = Progress(
        label,
        scorer.input_nt(regions),
        "input nt",
        tallies={"genes": len(rows), "gene_nt": total_nt},
        rate_of="gene_nt",
        console=console,
        log_every_s=progress_every_s,
    )
    scorer.on_batch = progress.advance  # the time left from the nt the model read, with flanks
    with ParquetParts(out, pl.DataFrame(schema=SCORE_SCHEMA), part_rows=SCORE_PART_ROWS) as writer:
        for region, scores in scorer.scores(regions):
            frame = gene_rows(spans, region, scores, genome)
            writer.add(frame)
            progress.advance(0, genes=len(region.genes), gene_nt=frame.height)
        writer.close()
    done = progress.finish()
    seconds = max(done["seconds"], 1e-9)
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
    }
