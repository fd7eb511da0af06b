"""extract's calls mode one chromosome at a time, so that memory holds the experiment's calls
(without sequences) and CHUNK_ROWS windows with their score profiles, never every window at once.

1. `drop_all_n_calls`: the windows without a single A, C, G or T are found chunk by chunk (their
   sequences cut and thrown away) and their calls dropped before the split, as for a whole table.
2. The split and its checks run on the calls alone (data/windows.py, data/quality.py).
3. `write_call_windows`: chromosome by chromosome in the order they first appear in the calls,
   each chromosome's calls in table order, CHUNK_ROWS at a time: the sequences, the score
   profiles from that chromosome's scores (calling/scores.py reads one chromosome at a time),
   the output columns; written as parquet parts and joined into windows.parquet atomically, with
   extract's notes. A calls table whose chromosomes come in runs (make_calls writes one) keeps its
   row order; the rows of any other come out grouped by chromosome.

It sits in calling/, above data/: it joins data's windows with calling's score tables.
"""

from __future__ import annotations

from collections.abc import Iterator

import polars as pl

from workflow_scripts.calling.score_profiles import with_score_profiles
from workflow_scripts.calling.scores import Scores, ScoreTables
from workflow_scripts.data.call_table import CHROM_INDEX
from workflow_scripts.data.genome import Genome
from workflow_scripts.data.quality import NOTES_KEY
from workflow_scripts.data.tables import ParquetParts
from workflow_scripts.data.windows import call_windows, in_output_order

CHUNK_ROWS = 200_000  # windows cut, profiled and written at a time


def row_chunks(frame: pl.DataFrame) -> Iterator[pl.DataFrame]:
    for start in range(0, frame.height, CHUNK_ROWS):
        yield frame.slice(start, CHUNK_ROWS)


def drop_all_n_calls(genome: Genome, frame: pl.DataFrame, flank: int) -> tuple[pl.DataFrame, int]:
    """The calls whose window holds at least one A, C, G or T; how many were dropped."""
    has_base = [call_windows(genome, chunk, flank)[0].str.contains("[ACGT]") for chunk in row_chunks(frame)]
    kept = frame.filter(pl.concat(has_base)) if has_base else frame
    return kept, frame.height - kept.height


def chromosomes_in_table_order(frame: pl.DataFrame) -> Iterator[tuple[int, pl.DataFrame]]:
    """(chromosome index, its calls in table order), chromosomes in the order they first appear."""
    parts = frame.partition_by(CHROM_INDEX, maintain_order=True, as_dict=True)
    for key in list(parts):
        yield key[0], parts.pop(key)


def scores_alongside(
    genome: Genome, frame: pl.DataFrame, tables: ScoreTables | None
) -> Iterator[tuple[str, pl.DataFrame, Scores | None]]:
    """(chromosome, its calls, its Scores or None where it has none), one chromosome's scores in
    memory at a time."""
    for index, calls in chromosomes_in_table_order(frame):
        chrom = genome.names[index]
        scored = next(tables.by_chromosome(only={chrom}), None) if tables else None
        yield chrom, calls, scored[1] if scored else None


def write_call_windows(
    genome: Genome, frame: pl.DataFrame, tables: ScoreTables | None, flank: int, out, notes: str
) -> dict:
    """windows.parquet of the split calls in `frame` (profiles when `tables`); the profiles'
    report (window bases in all and scored, as with_score_profiles counts them)."""
    report = {"bases": 0, "scored_bases": 0}
    with ParquetParts(out, pl.DataFrame(), part_rows=CHUNK_ROWS, metadata={NOTES_KEY: notes}) as writer:
        for chrom, calls, scores in scores_alongside(genome, frame, tables):
            for chunk in row_chunks(calls):
                windows = chunk.with_columns(*call_windows(genome, chunk, flank))
                if tables is not None:
                    parts = [(chrom, scores)] if scores is not None else []
                    windows, counted = with_score_profiles(windows, parts, genome.chrom_lengths(), flank)
                    report = {key: report[key] + counted[key] for key in report}
                writer.add(in_output_order(windows))
        writer.close()
    bases = report["bases"]
    return {**report, "scored_share": report["scored_bases"] / bases if bases else None}
