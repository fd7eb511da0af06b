"""predict_calls: peak memory and calls/s against the size of the calls table (issue 14).

    python -m benchmarks.predict_memory [--calls 500000 2000000 5000000] [--chunk-size 50000]
        [--formats parquet tsv] [--flank 50] [--model '{"arch": "cnn", "d_model": 8, "n_layers": 1}']

Each run is the rule's entry point (`python -m workflow_scripts.rules.predict_calls`) in a
process of its own, on CPU with OMP_NUM_THREADS=1, scoring a synthetic calls table at random
sites of the demo genome (chrom, position, strand, gene_id, splice_type, score; parquet in row
groups of 262,144 rows, polars' default, or TSV). The model is built from `--model` with random
weights: time and memory do not depend on the weights. That process samples its own
/proc/self/status every 10 ms: peak RSS (VmHWM) and peak anonymous RSS (RssAnon: the heap, what
the program holds; RssFile is shared libraries and the memory-mapped genome, clean pages the
kernel can drop). Bounded memory means peak anon RSS stays flat as the table grows; the last
column says what the whole table would take in memory. Files go to `--work-dir` (/tmp).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import polars as pl
import torch

from benchmarks.inputs import demo_genome_index
from benchmarks.runner import run_with_peak_memory
from benchmarks.tables import load_line, print_table
from workflow_scripts.command_line import path_flags
from workflow_scripts.config.sections import complete_section
from workflow_scripts.data.genome import Genome
from workflow_scripts.data.quality import experiment_labels
from workflow_scripts.errors import InputError, run_cli
from workflow_scripts.models.builtin import build_model
from workflow_scripts.tokenization.tokenizers import NucleotideTokenizer
from workflow_scripts.training.trained_on import trained_on

TINY_MODEL = '{"arch": "cnn", "d_model": 8, "n_layers": 1}'
PIECE_ROWS = 1_000_000  # the synthetic table is written a piece at a time
ROW_GROUP_ROWS = 262_144
BATCH_SIZE = 256
EXPERIMENT = {"name": "bench", "error_label": "FP", "correct_label": "TP"}
SAMPLE_EVERY_S = 0.01  # the probe reads the process's memory this often


def calls_piece(genome: Genome, n: int, seed: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    chrom = rng.integers(0, len(genome), n)
    return pl.DataFrame(
        {
            "chrom": np.asarray(genome.names)[chrom],
            "position": rng.integers(1, genome.lengths[chrom] + 1),
            "strand": np.where(rng.random(n) < 0.5, "-", "+"),
            "gene_id": [f"gene{i:06d}" for i in rng.integers(0, max(n // 3, 1), n)],
            "splice_type": np.where(rng.random(n) < 0.5, "donor", "acceptor"),
            "score": rng.random(n),
        }
    )


def calls_table(work: Path, genome: Genome, n: int, file_format: str) -> Path:
    """n synthetic calls, written a piece at a time (this process never holds the table)."""
    path = work / f"calls_{n}.{file_format}"
    if path.exists():
        return path
    pieces = []
    for start in range(0, n, PIECE_ROWS):
        pieces.append(work / f".piece_{start}.parquet")
        calls_piece(genome, min(PIECE_ROWS, n - start), seed=start).write_parquet(pieces[-1])
    joined = pl.scan_parquet(pieces)
    if file_format == "parquet":
        joined.sink_parquet(path, row_group_size=ROW_GROUP_ROWS)
    else:
        joined.sink_csv(path, separator="\t")
    for piece in pieces:
        piece.unlink()
    return path


def model_section(text: str) -> dict:
    """--model: a JSON model: section, completed and checked by the schema; InputError if not."""
    try:
        values = json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError("--model", "json", f"not JSON ({error})") from None
    if not isinstance(values, dict):
        raise InputError("--model", "json", "not a JSON object (the model: section)")
    return complete_section("model", values)


def tiny_model(work: Path, model: dict, flank: int) -> dict[str, Path]:
    """model.pt / model.json as train writes them (random weights) and a metrics.json threshold."""
    tokenizer, max_tokens = NucleotideTokenizer(1), 2 * flank + 2
    torch.manual_seed(0)
    paths = {name: work / name for name in ("model.pt", "model.json", "metrics.json")}
    torch.save(
        build_model(model, tokenizer.vocab_size, max_tokens, pretrained=False).state_dict(), paths["model.pt"]
    )
    window = {"flank": flank, "length": 2 * flank + 1, "site_offset": flank}
    record = trained_on({"window": window, "labels": experiment_labels(EXPERIMENT)}, tokenizer, [])
    paths["model.json"].write_text(
        json.dumps({"experiment": EXPERIMENT["name"], "model": model, "max_tokens": max_tokens, **record})
    )
    paths["metrics.json"].write_text(json.dumps({"threshold_choice": {"threshold": 0.5}}))
    return paths


def table_mib(path: Path, n: int) -> float:
    """The whole table's size in memory (polars), from its first 100,000 rows."""
    head = pl.scan_parquet(path) if path.suffix == ".parquet" else pl.scan_csv(path, separator="\t")
    sample = head.head(100_000).collect()
    return sample.estimated_size() / 2**20 * n / max(sample.height, 1)


def predict_run(work: Path, index: Path, calls: Path, model: dict[str, Path], args) -> dict:
    """Wall seconds and peak memory (MiB) of one predict_calls process."""
    config = {
        "experiment": EXPERIMENT,
        "predict": {"chunk_size": args.chunk_size},
        "window": {"flank": args.flank},
        "evaluate": {"batch_size": BATCH_SIZE},
    }
    paths = {
        "calls": calls,
        "genome": index,
        "model": model["model.pt"],
        "model-config": model["model.json"],
        "metrics": model["metrics.json"],
    }
    out = work / f"predictions_{calls.name}.parquet"
    argv = [*(f"--{k}={v}" for k, v in paths.items()), *path_flags({}, {"predictions": out})]
    argv += ["--config", json.dumps(config)]
    seconds, peak = run_with_peak_memory(
        "workflow_scripts.rules.predict_calls", argv, SAMPLE_EVERY_S, env={"OMP_NUM_THREADS": "1"}
    )
    scored = pl.scan_parquet(out).select(pl.len()).collect().item()
    out.unlink()
    return {"seconds": seconds, "scored": scored, **peak}


def table_row(work: Path, index: Path, calls: Path, model: dict[str, Path], args, n: int, file_format: str):
    run = predict_run(work, index, calls, model, args)
    assert run["scored"] == n, run
    seconds = run["seconds"]
    memory = [run["VmHWM"], run["RssAnon"], run["RssFile"]]
    return [file_format, n, args.chunk_size, seconds, n / seconds, *memory, table_mib(calls, n)]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, nargs="+", default=[500_000, 2_000_000, 5_000_000])
    parser.add_argument("--chunk-size", type=int, default=50_000, help="predict.chunk_size")
    parser.add_argument("--formats", nargs="+", choices=["parquet", "tsv"], default=["parquet"])
    parser.add_argument("--flank", type=int, default=50, help="window.flank (windows of 2*flank+1 nt)")
    parser.add_argument("--model", default=TINY_MODEL, help="the model: section (JSON)")
    parser.add_argument("--work-dir", default="/tmp/errorseq-bench-predict")
    args = parser.parse_args(argv)
    model_section(args.model)  # a bad --model fails before the demo genome is made
    work = Path(args.work_dir)
    work.mkdir(parents=True, exist_ok=True)
    index = demo_genome_index(work / "demo")
    genome = Genome.open_cached(index)
    model = tiny_model(work, model_section(args.model), args.flank)
    rows = [
        table_row(work, index, calls_table(work, genome, n, file_format), model, args, n, file_format)
        for file_format in args.formats
        for n in args.calls
    ]
    print_table(
        f"predict_calls: {args.model}, {2 * args.flank + 1}-nt windows, CPU, OMP_NUM_THREADS=1, "
        f"demo genome {genome.lengths.sum() / 1e6:.1f} Mb ({load_line()})",
        [
            "table",
            "calls",
            "chunk rows",
            "wall s",
            "calls/s",
            "peak RSS MiB",
            "peak anon RSS MiB",
            "peak file RSS MiB",
            "whole table in memory MiB (polars estimate)",
        ],
        rows,
    )


if __name__ == "__main__":
    run_cli(main)
