"""Host time per step, the part of errorseq's step that is not the model's maths (issue 18, item 3).

One process, one thread, rank 0's batches of errorseq's first steps (its sampler replayed):
- errorseq's collation (training/batches.BatchCollator with the HF tokenizer, models/hf.py):
  tokenising the batch's strings, then filling the padded tensors row by row;
- the Trainer's collation: the windows tokenised once up front (as peer_trainer does), then
  DataCollatorWithPadding per batch;
- the model's forward + backward + AdamW step on the same batches (what both pay alike);
- one all-reduce of a scalar between two gloo processes: errorseq's loop makes one every step
  (the stop-signal check, training/loop._stop_signal) beside DDP's gradient all-reduce.
Best of `repeats` for each; the machine's other jobs only add time.
"""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from benchmarks.peer_batching import errorseq_batches
from workflow_scripts.training.batches import BatchCollator, load_split

ALL_REDUCE_CALLS = 200


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


def host_times(
    data: dict, model_dir: Path, world_size: int, seed: int, steps: int, repeats: int = 3, device: str = "cpu"
) -> dict:
    """Milliseconds per step of each part, on rank 0's batches of the first `steps` steps (the
    model's maths on `device`)."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer, DataCollatorWithPadding

    from workflow_scripts.models.hf import HFTokenizer

    summary = json.loads(Path(data["summary"]).read_text())
    train = load_split(data["windows"], data["manifest"], "train")
    replay = errorseq_batches(train.buckets, summary["batch_sizes"], train.token_lengths, world_size, seed, 0)
    batches = [step[0] for step in replay[:steps]]
    collator = BatchCollator(train, HFTokenizer(str(model_dir)), int(summary["max_length"]))
    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    padder = DataCollatorWithPadding(tokenizer)
    began = time.perf_counter()
    ids = tokenizer(train.sequences)["input_ids"]
    pretokenise_ms = 1000 * (time.perf_counter() - began)
    n = len(batches)
    times = {
        "steps": n,
        "errorseq_collate_ms": best_ms(repeats, lambda: [collator(b) for b in batches], n),
        "errorseq_tokenise_ms": best_ms(
            repeats,
            lambda: [collator.tokenizer.encode_ids([train.sequences[i] for i in b]) for b in batches],
            n,
        ),
        "trainer_collate_ms": best_ms(
            repeats,
            lambda: [
                padder([{"input_ids": ids[i], "labels": int(train.labels[i])} for i in b]) for b in batches
            ],
            n,
        ),
        "trainer_pretokenise_ms_per_step": pretokenise_ms / max(len(replay), 1),
    }
    times["errorseq_fill_ms"] = times["errorseq_collate_ms"] - times["errorseq_tokenise_ms"]
    model = AutoModelForSequenceClassification.from_pretrained(str(model_dir), num_labels=2).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    prepared = [{key: value.to(device) for key, value in collator(b).items()} for b in batches]

    def maths() -> None:
        for batch in prepared:
            out = model(input_ids=batch["ids"], attention_mask=batch["mask"].long(), labels=batch["labels"])
            out.loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
        if device == "cuda":
            torch.cuda.synchronize()

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as each rank runs
    try:
        times["model_step_ms"] = best_ms(repeats, maths, n)
    finally:
        torch.set_num_threads(threads)
    times["all_reduce_ms"] = all_reduce_ms()
    return times


def host_rows(name: str, times: dict) -> list[list]:
    step = times["model_step_ms"]

    def share(ms: float) -> str:
        return f"{ms:.2f} ({100 * ms / (ms + step):.1f} % of a step)"

    return [
        [name, "errorseq: BatchCollator (tokenise + fill)", share(times["errorseq_collate_ms"])],
        [name, "  of which the HF tokenizer call", f"{times['errorseq_tokenise_ms']:.2f}"],
        [name, "  of which padding into tensors, row by row", f"{times['errorseq_fill_ms']:.2f}"],
        [name, "errorseq: stop-signal all-reduce (gloo, 2 processes)", share(times["all_reduce_ms"])],
        [
            name,
            "Trainer: DataCollatorWithPadding on pre-tokenised windows",
            share(times["trainer_collate_ms"]),
        ],
        [
            name,
            "Trainer: tokenising all windows once, per step",
            f"{times['trainer_pretokenise_ms_per_step']:.2f}",
        ],
        [name, "model forward + backward + AdamW (both alike)", f"{step:.1f}"],
    ]
