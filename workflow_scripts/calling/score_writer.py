"""score_base_model's scores table, built and written on a thread beside the scoring.

The scorer hands over each finished region's scores (`add`, in region order) and goes on. A writer
thread turns them into rows, one per gene position (gene_id, chrom, strand, position 1-based,
donor, acceptor; a position inside two overlapping genes of one strand is a row of each), a
bundle of regions at a time with array operations (a few Python objects per gene, none per
position), and streams the rows into one parquet file through polars' streaming sink: row groups
are written as bundles arrive and nothing is read back and joined at the end. Memory holds at most
QUEUED_BUNDLES bundles of about BUNDLE_ROWS rows besides the one being written.

The file appears only when complete (io_utils.atomic_path). An error on the writer's side (a full
disk) is raised in the scorer at its next `add` or at `close`; an error on the scorer's side stops
the writer (`__exit__`); either way no output is left. A writer killed outright leaves its
temporary file, which the next writer of the same output removes.
"""

from __future__ import annotations

import queue
import threading
import time
from pathlib import Path

import numpy as np
import polars as pl

from workflow_scripts.calling.regions import Region
from workflow_scripts.io_utils import atomic_path

BUNDLE_ROWS = 1_000_000  # rows built into one frame by the writer (~26 MB of scores and positions)
QUEUED_BUNDLES = 4  # bundles waiting for the writer before the scorer waits for it
HANDOVER_POLL_S = 0.1  # how often a scorer waiting on a full queue checks that the writer lives
DONE, ABORT = object(), object()  # what the scorer sends after the last bundle, or on failure


class WriterStopped(Exception):
    """The scorer failed: the writer stops without output."""


class ScoreWriter:
    """Rows of `genes` (gene_id, start, end, strand; row i = gene index i of the regions) with the
    scores of their regions, written to `out` with `schema`. Use as a context manager; `close`
    finishes the file. `seconds`: the writer's wall time building rows, waiting for the scorer
    (idle) and the rest of the sink (encoding and writing parquet); `rows_cpu_s`: its thread's CPU
    seconds building rows (polars may do part of a gather on its own threads)."""

    def __init__(self, out: str | Path, genes: pl.DataFrame, chrom_names: list[str], schema: dict):
        self.out, self.schema = Path(out), pl.Schema(schema)
        remove_stale_files(self.out)
        self.gene_ids = genes["gene_id"].cast(pl.String)
        self.starts = genes["start"].to_numpy().astype(np.int64)
        self.lengths = genes["end"].to_numpy().astype(np.int64) - self.starts + 1
        self.chrom_names = pl.Series(chrom_names, dtype=pl.String)
        self.strands = pl.Series(["+", "-"], dtype=pl.String)
        self.bundle: list[tuple[Region, np.ndarray]] = []
        self.bundle_rows = 0
        self.queue: queue.Queue = queue.Queue(maxsize=QUEUED_BUNDLES)
        self.error: BaseException | None = None
        self.rows_s = self.idle_s = self.sink_s = self.rows_cpu_s = 0.0
        self.thread = threading.Thread(target=self.write, name="score-writer", daemon=True)
        self.thread.start()

    def __enter__(self) -> ScoreWriter:
        return self

    def __exit__(self, exc_type, exc, traceback) -> None:
        if self.thread.is_alive():
            self.put(ABORT, raise_error=False)
            self.thread.join()

    def region_rows(self, region: Region) -> int:
        return int(self.lengths[list(region.genes)].sum())

    def add(self, region: Region, scores: np.ndarray) -> int:
        """Hand over a region's scores, float32 (2, region length): donor, acceptor. Returns its rows."""
        rows = self.region_rows(region)
        self.bundle.append((region, scores))
        self.bundle_rows += rows
        if self.bundle_rows >= BUNDLE_ROWS:
            self.put(self.bundle)
            self.bundle, self.bundle_rows = [], 0
        return rows

    def close(self) -> None:
        """Write what is left and finish the file."""
        if self.bundle:
            self.put(self.bundle)
            self.bundle, self.bundle_rows = [], 0
        self.put(DONE)
        self.thread.join()
        if self.error is not None:
            raise self.error

    @property
    def seconds(self) -> dict[str, float]:
        parquet = self.sink_s - self.rows_s - self.idle_s
        return {"writer: rows": self.rows_s, "writer: parquet": parquet, "writer: idle": self.idle_s}

    def put(self, item, raise_error: bool = True) -> None:
        while self.thread.is_alive():
            try:
                self.queue.put(item, timeout=HANDOVER_POLL_S)
                break
            except queue.Full:
                continue
        if raise_error and self.error is not None:
            raise self.error

    def write(self) -> None:
        """The writer thread: the bundles, as they come, into `out`."""
        from polars.io.plugins import register_io_source

        began = time.perf_counter()
        try:
            with atomic_path(self.out) as tmp:
                register_io_source(self.frames, schema=self.schema).sink_parquet(tmp)
        except BaseException as error:  # handed to the scorer's thread, raised there
            self.error = error
        self.sink_s = time.perf_counter() - began

    def frames(self, with_columns, predicate, n_rows, batch_size):
        """polars' source: one frame per bundle until DONE (ABORT: stop without output)."""
        while True:
            began = time.perf_counter()
            item = self.queue.get()
            self.idle_s += time.perf_counter() - began
            if item is DONE:
                return
            if item is ABORT:
                raise WriterStopped("scoring failed")
            began, cpu = time.perf_counter(), time.thread_time()
            frame = self.rows(item)
            self.rows_s += time.perf_counter() - began
            self.rows_cpu_s += time.thread_time() - cpu
            yield frame

    def rows(self, bundle: list[tuple[Region, np.ndarray]]) -> pl.DataFrame:
        """One row per position of each gene of the bundle's regions, in region, gene and position order."""
        genes = np.concatenate([np.asarray(region.genes, dtype=np.int64) for region, _ in bundle])
        region_of_gene = np.repeat(np.arange(len(bundle)), [len(region.genes) for region, _ in bundle])
        starts, lengths = self.starts[genes], self.lengths[genes]
        # a gene's first position (1-based) is column start - 1 - region.start of its region's scores
        columns = [
            scores[:, start - 1 - region.start : start - 1 - region.start + length]
            for (region, scores), start, length in zip(
                (bundle[i] for i in region_of_gene), starts.tolist(), lengths.tolist()
            )
        ]
        donor = np.concatenate([gene[0] for gene in columns])
        acceptor = np.concatenate([gene[1] for gene in columns])
        chrom = np.array([region.chrom for region, _ in bundle], dtype=np.int64)[region_of_gene]
        minus = np.array([region.minus for region, _ in bundle], dtype=np.int64)[region_of_gene]
        return pl.DataFrame(
            {
                "gene_id": self.gene_ids.gather(np.repeat(genes, lengths)),
                "chrom": self.chrom_names.gather(np.repeat(chrom, lengths)),
                "strand": self.strands.gather(np.repeat(minus, lengths)),
                "position": concatenated_ranges(starts, lengths),
                "donor": donor,
                "acceptor": acceptor,
            },
            schema=self.schema,
        )


def remove_stale_files(out: Path) -> None:
    """What an earlier writer of `out` that was killed (SIGKILL, a lost node) left beside it: its
    half-written temporary file (io_utils.atomic_path's `.<name>.*.tmp`), and the part folders of
    the writer before this one. Snakemake runs one job per output, so none is still being written."""
    from workflow_scripts.data.tables import remove_stale_parts

    if out.parent.is_dir():
        for stale in out.parent.glob(f".{out.name}.*.tmp"):
            stale.unlink(missing_ok=True)
        remove_stale_parts(out)


def concatenated_ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """np.concatenate([np.arange(s, s + n) for s, n in zip(starts, lengths)]) without the loop."""
    ends = np.cumsum(lengths)
    return np.arange(ends[-1] if len(ends) else 0, dtype=np.int64) + np.repeat(
        starts - (ends - lengths), lengths
    )
