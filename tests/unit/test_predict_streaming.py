"""predict_calls reads its calls table a chunk at a time (inference/new_calls.read_chunks).

Two properties: the chunks are the whole table's rows (text, gzip text, parquet; a quoted value
spanning lines is never cut), and memory holds about one chunk, not the table, while a slow
consumer (the model) works on each chunk. The memory is measured in a fresh interpreter, as the
anonymous resident memory of that process (/proc/self/status RssAnon).
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from tests.workflow_helpers import subprocess_env
from workflow_scripts.data.tables import ROW
from workflow_scripts.inference.new_calls import calls_schema, read_chunks


def calls_frame(n: int, note_length: int = 8) -> pl.DataFrame:
    i = pl.int_range(n)
    return pl.select(
        chrom=pl.lit("chr") + (i % 4 + 1).cast(pl.String),
        position=(i * 7919 % 90_000 + 1).cast(pl.String),
        strand=pl.when(i % 3 == 0).then(pl.lit("-")).otherwise(pl.lit("+")),
        gene_id=pl.lit("gene") + (i // 5).cast(pl.String),
        note=(i.cast(pl.String) + pl.lit("x" * note_length)).str.slice(0, note_length),
    )


def write_table(frame: pl.DataFrame, path) -> None:
    if str(path).endswith(".parquet"):
        frame.write_parquet(path, row_group_size=50_000)
    elif str(path).endswith(".gz"):
        path.write_bytes(gzip.compress(frame.write_csv(separator="\t").encode()))
    else:
        frame.write_csv(path, separator="," if str(path).endswith(".csv") else "\t")


def streamed(path, chunk_size: int) -> list[pl.DataFrame]:
    return list(read_chunks(path, chunk_size))


@pytest.mark.parametrize("name", ["calls.tsv", "calls.csv", "calls.tsv.gz", "calls.parquet"])
@pytest.mark.parametrize("chunk_size", [1, 7, 1000])
def test_the_chunks_are_the_whole_table_in_order(tmp_path, name, chunk_size):
    frame = calls_frame(250)
    write_table(frame, tmp_path / name)
    chunks = streamed(tmp_path / name, chunk_size)
    assert [chunk.height for chunk in chunks[:-1]] == [chunk_size] * (len(chunks) - 1)
    assert 0 < chunks[-1].height <= chunk_size
    joined = pl.concat(chunks)
    assert joined[ROW].to_list() == list(range(1, 251))
    assert_frame_equal(joined.drop(ROW), frame)
    assert calls_schema(tmp_path / name) == frame.schema


def test_a_quoted_value_spanning_lines_is_never_cut(tmp_path):
    frame = pl.DataFrame(
        {
            "chrom": ["chr1"] * 6,
            "position": [str(p) for p in range(1, 7)],
            "strand": ["+"] * 6,
            "note": ["a", "two\nlines", 'a "quote" in it', "three\nline\nvalue", "b", "c"],
        }
    )
    frame.write_csv(tmp_path / "calls.csv")
    assert (tmp_path / "calls.csv").read_text().count("\n") == 10  # 7 records on 10 lines
    for chunk_size in (1, 2, 3, 10):
        chunks = streamed(tmp_path / "calls.csv", chunk_size)
        assert all(chunk.height <= chunk_size for chunk in chunks)
        assert_frame_equal(pl.concat(chunks).drop(ROW), frame)


def test_a_blank_line_is_a_row_as_in_the_whole_file(tmp_path):
    (tmp_path / "calls.tsv").write_text("chrom\tposition\tstrand\nchr1\t5\t+\n\nchr1\t9\t-\n")
    whole = pl.read_csv(tmp_path / "calls.tsv", separator="\t", infer_schema=False)
    for chunk_size in (1, 2, 5):
        assert_frame_equal(pl.concat(streamed(tmp_path / "calls.tsv", chunk_size)).drop(ROW), whole)


# Streams a table with a slow consumer and prints the anonymous memory above the start (polars
# already set up):
# after the first chunk and a pause (a reader that works ahead does it now), the most over
# all chunks, and the size of the whole table in memory.
MEASURE = """
import json, sys, time
import polars as pl
from workflow_scripts.inference.new_calls import read_chunks

def anon_mb():
    line = next(l for l in open("/proc/self/status") if l.startswith("RssAnon"))
    return int(line.split()[1]) / 1024

path, chunk_size = sys.argv[1], int(sys.argv[2])
next(read_chunks(path, 10))  # polars' thread pool and allocator set up before the start
start = anon_mb()
chunks = read_chunks(path, chunk_size)
largest = next(chunks).height
time.sleep(1.0)
most = anon_mb() - start
for chunk in chunks:
    largest = max(largest, chunk.height)
    most = max(most, anon_mb() - start)
whole = pl.read_parquet(path) if path.endswith(".parquet") else pl.read_csv(path, separator="\\t")
print(json.dumps({"most_mb": most, "table_mb": whole.estimated_size() / 2**20, "largest": largest}))
"""


@pytest.mark.parametrize("name", ["calls.tsv", "calls.parquet"])
def test_streaming_holds_about_one_chunk_not_the_table(tmp_path, name):
    write_table(calls_frame(1_000_000, note_length=200), tmp_path / name)
    result = subprocess.run(
        [sys.executable, "-c", MEASURE, str(tmp_path / name), "10000"],
        capture_output=True,
        text=True,
        check=True,
        env=subprocess_env(OMP_NUM_THREADS="1"),
    )
    measured = json.loads(result.stdout)
    assert measured["largest"] == 10_000
    assert measured["table_mb"] > 200
    # a chunk of 10,000 rows is ~2 MB; a reader working ahead would hold up to the whole table
    assert measured["most_mb"] < measured["table_mb"] / 5, measured
