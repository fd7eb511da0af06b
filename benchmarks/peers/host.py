"""Host time per step, the part of errorseq's step that is not the model's maths (issue 18, item 3).

One process, one thread, rank 0's batches of errorseq's first steps (its sampler replayed):
- errorseq's collation (training/batches.BatchCollator with the HF tokenizer, models/hf.py): the
  split tokenised once when the collator is built (tokenization/packed.py; shown per step of an
  epoch), then each batch cut from it by array indexing; beside it, what errorseq did before
  (tokenising each batch's strings, then filling the padded tensors row by row: encode_batch);
- the Trainer's collation: the windows tokenised once up front (as peers/trainer.py does), then
  DataCollatorWithPadding per batch;
- the model's forward + backward + AdamW step on the same batches in training mode (dropout on),
  with transformers' sdpa attention (the Trainer's) and with errorseq's (models/hf_attention.py);
- one all-reduce of a scalar between two gloo processes: errorseq's loop makes one per step-log
  record (the stop-signal check, training/loop._maybe_stop; every step before), beside DDP's
  gradient all-reduce.
Best of `repeats` for each; the machine's other jobs only add time.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import time
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from benchmarks.peers.batching import errorseq_batches
from benchmarks.peers.inputs import prepare, work_folder
from benchmarks.peers.tables import HOST_HEADER, host_rows
from benchmarks.tables import load_line, print_table
from workflow_scripts.config.sections import section_defaults
from workflow_scripts.training.batches import (
    BatchCollator,
    budget_batches,
    load_split,
    sorted_batches,
    training_batch_tokens,
)

ALL_REDUCE_CALLS = 200
WORLD = 2  # the peers' ranks: rank 0's batches of a two-rank run


def best_ms(repeats: int, function, per: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        began = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - began)
    return 1000 * best / per


def _all_reduce_worker(rank: int, port: int, result) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=2)
    tensor = torch.zeros(1, dtype=torch.float64)
    for _ in range(20):
        dist.all_reduce(tensor, op=dist.ReduceOp.MAX)
    began = time.perf_counter()
    for _ in range(ALL_REDUCE_CALLS):
        dist.all_reduce(tensor, op=dist.ReduceOp.MAX)
    if rank == 0:
        result.value = 1000 * (time.perf_counter() - began) / ALL_REDUCE_CALLS
    dist.destroy_process_group()


def all_reduce_ms() -> float:
    """Milliseconds per all-reduce of one float between two gloo processes on this machine."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = mp.get_context("spawn").Value("d", float("nan"))
    mp.spawn(_all_reduce_worker, args=(port, result), nprocs=2, join=True)
    return float(result.value)


def _validation_worker(data: dict, model_dir: str, budget: int | None, result) -> None:
    """Peak RSS growth (MiB) of one forward pass over rank 0 of 2's validation batches: 256
    windows each (budget None: errorseq before) or cut by a token budget (errorseq now)."""
    import resource

    from transformers import AutoModelForSequenceClassification

    from workflow_scripts.models.hf import HFTokenizer

    torch.set_num_threads(1)
    summary = json.loads(Path(data["summary"]).read_text())
    val = load_split(data["windows"], data["manifest"], "val")
    max_tokens = int(summary["max_length"])
    collator = BatchCollator(val, HFTokenizer(model_dir), max_tokens)
    model = AutoModelForSequenceClassification.from_pretrained(model_dir, num_labels=2).eval()
    if budget is None:
        batches = sorted_batches(val, 256, 0, 2)
    else:
        batches = budget_batches(np.minimum(val.token_lengths, max_tokens), budget, 0, 2)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with torch.no_grad():
        for indices in batches:
            batch = collator(indices)
            model(input_ids=batch["ids"], attention_mask=batch["mask"].long())
    result.value = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024


def validation_rss_mib(data: dict, model_dir: Path) -> dict:
    """Validation's peak RSS growth on one rank, before (256-window batches) and now (training's
    largest per-rank batch in tokens), each in a fresh process."""
    summary = json.loads(Path(data["summary"]).read_text())
    train = load_split(data["windows"], data["manifest"], "train")
    budget = training_batch_tokens(train, summary["batch_sizes"], int(summary["max_length"]))
    context = mp.get_context("spawn")
    grown = {}
    for name, cut in (("before", None), ("now", budget)):
        result = context.Value("d", float("nan"))
        process = context.Process(target=_validation_worker, args=(data, str(model_dir), cut, result))
        process.start()
        process.join()
        grown[name] = float(result.value)
    return {
        "val_budget_tokens": budget,
        "val_rss_before_mib": grown["before"],
        "val_rss_now_mib": grown["now"],
    }


def training_maths(model_dir: Path, prepared: list[dict], attention: str, device: str):
    """A function running the maths of one training step per batch, `attention` as
    model.hf_attention names it."""
    import transformers

    from workflow_scripts.models import hf_attention

    model = transformers.AutoModelForSequenceClassification.from_pretrained(str(model_dir), num_labels=2)
    hf_attention.use_for(model, attention, transformers)
    model.to(device).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def maths() -> None:
        for batch in prepared:
            out = model(input_ids=batch["ids"], attention_mask=batch["mask"].long(), labels=batch["labels"])
            out.loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
        if device == "cuda":
            torch.cuda.synchronize()

    return maths


def model_step_ms(model_dir: Path, prepared: list[dict], repeats: int, device: str) -> dict[str, float]:
    """ms per step with transformers' sdpa attention and with errorseq's, one thread (as each
    rank runs), the two timed in turn so that the load falls on both alike; best of `repeats`."""
    runs = {
        key: training_maths(model_dir, prepared, attention, device)
        for attention, key in (("sdpa", "model_step_ms"), ("auto", "model_step_errorseq_ms"))
    }
    best = dict.fromkeys(runs, float("inf"))
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        for _ in range(repeats):
            for key, maths in runs.items():
                began = time.perf_counter()
                maths()
                best[key] = min(best[key], 1000 * (time.perf_counter() - began) / len(prepared))
    finally:
        torch.set_num_threads(threads)
    return best


def collation_times(train, model_dir: Path, max_tokens: int, batches: list, epoch_steps: int, repeats: int):
    """errorseq's and the Trainer's collation, ms per step (tokenising once: per step of an
    epoch of `epoch_steps`), and errorseq's collator."""
    from transformers import AutoTokenizer, DataCollatorWithPadding

    from workflow_scripts.models.hf import HFTokenizer

    hf_tokenizer = HFTokenizer(str(model_dir))
    collators = []
    tokenise_once_ms = best_ms(
        repeats, lambda: collators.append(BatchCollator(train, hf_tokenizer, max_tokens)), 1
    )
    collator = collators[-1]
    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    padder = DataCollatorWithPadding(tokenizer)
    began = time.perf_counter()
    ids = tokenizer(train.sequences)["input_ids"]
    pretokenise_ms = 1000 * (time.perf_counter() - began)

    def encode_each_batch() -> list:
        return [hf_tokenizer.encode_batch([train.sequences[i] for i in b], max_tokens) for b in batches]

    def pad_pretokenised() -> list:
        return [padder([{"input_ids": ids[i], "labels": int(train.labels[i])} for i in b]) for b in batches]

    n, per_step = len(batches), max(epoch_steps, 1)
    times = {
        "steps": n,
        "errorseq_collate_ms": best_ms(repeats, lambda: [collator(b) for b in batches], n),
        "errorseq_tokenise_once_ms_per_step": tokenise_once_ms / per_step,
        "errorseq_before_collate_ms": best_ms(repeats, encode_each_batch, n),
        "trainer_collate_ms": best_ms(repeats, pad_pretokenised, n),
        "trainer_pretokenise_ms_per_step": pretokenise_ms / per_step,
    }
    return times, collator


def host_times(
    data: dict, model_dir: Path, world_size: int, seed: int, steps: int, repeats: int = 3, device: str = "cpu"
) -> dict:
    """Milliseconds per step of each part, on rank 0's batches of the first `steps` steps (the
    model's maths on `device`)."""
    summary = json.loads(Path(data["summary"]).read_text())
    train = load_split(data["windows"], data["manifest"], "train")
    replay = errorseq_batches(train.buckets, summary["batch_sizes"], train.token_lengths, world_size, seed, 0)
    batches = [step[0] for step in replay[:steps]]
    max_tokens = int(summary["max_length"])
    times, collator = collation_times(train, model_dir, max_tokens, batches, len(replay), repeats)
    prepared = [{key: value.to(device) for key, value in collator(b).items()} for b in batches]
    times.update(model_step_ms(model_dir, prepared, repeats, device))
    times["all_reduce_ms"] = all_reduce_ms()
    times["log_every_steps"] = section_defaults("train")["log_every_steps"]
    times.update(validation_rss_mib(data, model_dir))
    return times


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="peers' tiny data")
    parser.add_argument("--work-dir", default="/tmp/errorseq-bench/peers")
    parser.add_argument("--data", nargs="+", default=["demo", "long_tail"], choices=("demo", "long_tail"))
    parser.add_argument("--steps", type=int, default=30, help="rank 0's batches of this many steps")
    parser.add_argument("--repeats", type=int, default=2, help="best of this many")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    args = parser.parse_args(argv)
    model_dir, sets = prepare(work_folder(args.work_dir, args.quick), args.quick, args.data)
    before = load_line()
    rows = [
        row
        for data in sets
        for row in host_rows(
            data["name"], host_times(data, model_dir, WORLD, 0, args.steps, args.repeats, args.device)
        )
    ]
    print_table(f"Host time per step ({before} before, {load_line()} after)", HOST_HEADER, rows)


if __name__ == "__main__":
    main()
