"""benchmarks/peers/: the recipe's batching, the token accounting, the timelines, the watcher,
the recipe inside the real Trainer. The whole quick run: tests/long/test_bench_peers.py."""

from __future__ import annotations

import json
import os
import sys

import numpy as np
import pytest

from benchmarks.peers.batching import (
    RECIPE_BOUNDS,
    BucketPadCollator,
    RecipeBatchSampler,
    count_tokens,
    errorseq_batches,
    errorseq_tokens,
    group_by_length_batch_size,
    recipe_accumulation,
    recipe_bucket,
    recipe_tokens,
)
from benchmarks.peers.watch import Watched, errorseq_timeline, trainer_timeline, watch

LENGTHS = np.array([100, 200, 300, 700, 256, 257, 512, 513, 768, 50, 60, 70])


def test_recipe_sampler_keeps_buckets_batch_sizes_2_1_1_and_every_window_once():
    sampler = RecipeBatchSampler(LENGTHS, seed=3)
    batches = sampler.batches()
    assert sorted(i for batch in batches for i in batch) == list(range(len(LENGTHS)))
    assert len(batches) == len(sampler) == 3 + 3 + 3  # 6 short windows in pairs, 3 + 3 alone
    for batch in batches:
        buckets = {recipe_bucket(int(LENGTHS[i])) for i in batch}
        assert len(buckets) == 1
        assert len(batch) == (2 if buckets == {0} else 1)
    sampler.set_epoch(1)
    assert sampler.batches() != batches  # reshuffled each epoch


def test_recipe_collator_pads_each_batch_to_its_buckets_bound():
    collator = BucketPadCollator(pad_id=0)
    for length, bound in ((10, 256), (256, 256), (257, 512), (600, 768), (768, 768)):
        batch = collator([{"input_ids": [7] * length, "labels": 1}, {"input_ids": [7] * 5, "labels": 0}])
        assert batch["input_ids"].shape == (2, bound)
        assert batch["attention_mask"].sum(1).tolist() == [length, 5]
        assert (batch["input_ids"][1, 5:] == 0).all() and batch["labels"].tolist() == [1, 0]


def test_token_accounting_on_a_toy_set():
    counted = count_tokens([[0, 1], [2], [3]], LENGTHS, [200, 300, 768])
    assert (counted.real, counted.padded, counted.windows, counted.batches) == (1300, 400 + 300 + 768, 4, 3)
    with pytest.raises(ValueError, match="cannot be padded"):
        count_tokens([[3]], LENGTHS, [512])
    toy = np.array([100, 200, 300, 700])  # the recipe: [100, 200] → 2 × 256, [300] → 512, [700] → 768
    recipe = recipe_tokens(toy, seed=0)
    assert (recipe.real, recipe.padded, recipe.batches) == (1300, 512 + 512 + 768, 3)


def test_errorseq_replay_gives_every_rank_the_same_bucket_and_size_and_pads_to_the_batch_max():
    buckets = np.array([0] * 7 + [1] * 5)
    lengths = np.array([10, 12, 14, 16, 18, 20, 22, 40, 44, 48, 52, 56])
    steps = errorseq_batches(buckets, [2, 1], lengths, world_size=2, seed=0, epoch=0)
    seen = set()
    for step in steps:
        assert len(step) == 2 and len(step[0]) == len(step[1])
        assert len({int(buckets[i]) for batch in step for i in batch}) == 1
        seen.update(i for batch in step for i in batch)
    assert seen == set(range(12))
    counted = errorseq_tokens(steps, lengths, max_length=50)  # 52 and 56 are cut to 50
    clipped = np.minimum(lengths, 50)
    batches = [batch for step in steps for batch in step]
    assert counted.real == sum(int(clipped[b].sum()) for b in batches)
    assert counted.padded == sum(int(clipped[b].max()) * len(b) for b in batches)


def test_matching_carries_errorseqs_real_tokens_per_step():
    assert group_by_length_batch_size(2400, world_size=2, mean_length=120) == 10
    assert recipe_accumulation(2400, world_size=2, real_per_micro_batch=240) == 5
    assert recipe_accumulation(100, world_size=2, real_per_micro_batch=240) == 1  # never below one


def test_trainer_timeline_splits_steps_validation_and_saves():
    events = {
        "train_begin": [9.0],
        "epoch_begin": [10.0],
        "step_end": [11.0, 12.5, 14.0, 20.0],
        "evaluate_end": [15.0],
        "save_end": [15.5],
        "train_end": [21.0],
        "export_end": [21.25],
        "predict_end": [22.0],
    }
    timeline = trainer_timeline(events, Watched(launched=4.0, exited=23.0, cpu=[(0.0, 0.0), (30.0, 60.0)]))
    assert timeline["startup_s"] == 6.0
    assert timeline["train_s"] == 1.0 + 1.5 + 1.5 + (20.0 - 15.5)
    assert timeline["train_cpu_s"] == pytest.approx(2 * timeline["train_s"])  # two busy ranks
    assert (timeline["validation_s"], timeline["checkpoint_s"]) == (1.0, 0.5)
    assert (timeline["export_s"], timeline["teardown_s"], timeline["launched_to_export_s"]) == (
        0.25,
        1.0,
        17.25,
    )


def test_errorseq_timeline_reads_the_step_log_and_the_outputs_mtimes(tmp_path):
    (tmp_path / "checkpoints").mkdir()
    for name, mtime in (
        ("checkpoints/latest", 31.0),
        ("model.pt", 31.5),
        ("model.json", 31.6),
        ("steps.jsonl", 32.0),
    ):
        (tmp_path / name).write_text("")
        os.utime(tmp_path / name, (mtime, mtime))
    records = [
        (22.0, {"kind": "train", "epoch": 1, "step": 10, "step_s": 1.0}),  # steps began at 12
        (26.0, {"kind": "train", "epoch": 1, "step": 12, "step_s": 2.0}),
        (27.0, {"kind": "val", "epoch": 1}),
        (29.0, {"kind": "train", "epoch": 2, "step": 13, "step_s": 1.5}),  # began at 27.5
        (30.0, {"kind": "val", "epoch": 2}),
    ]
    watched = Watched(launched=2.0, exited=35.0, records=records, cpu=[(20.0, 5.0), (30.0, 15.0)])
    timeline = errorseq_timeline(watched, tmp_path)
    assert timeline["startup_s"] == 10.0
    assert timeline["train_s"] == 10.0 + 4.0 + 1.5
    assert timeline["train_cpu_s"] == pytest.approx((26.0 - 20.0) + 1.5)  # CPU read from 20 s on
    assert timeline["validation_s"] == 1.0 + 1.0
    assert timeline["checkpoint_s"] == (27.5 - 27.0) + (31.0 - 30.0)
    assert (timeline["export_s"], timeline["teardown_s"]) == (1.0, 3.0)


RANK_CHILD = """
import json, os, subprocess, sys
code = (
    "import json, sys, time\\n"
    "hold = bytearray(80 * 2**20)\\n"
    "for step in (1, 2):\\n"
    "    open(sys.argv[1], 'a').write(json.dumps({'step': step, 'written': time.time()}) + '\\\\n')\\n"
    "    time.sleep(0.3)\\n"
)
subprocess.run([sys.executable, "-c", code, sys.argv[1]], env={**os.environ, "RANK": "1"}, check=True)
"""


def test_watch_finds_ranks_their_peak_memory_and_step_records(tmp_path):
    log, steps = tmp_path / "log", tmp_path / "steps.jsonl"
    watched = watch([sys.executable, "-c", RANK_CHILD, str(steps)], log, steps, ranks=1)
    assert watched.returncode == 0 and watched.wall_s > 0.6
    assert list(watched.peak_rss_mb) == [1] and watched.peak_rss_mb[1] > 80
    assert 0.0 < watched.cpu_between(watched.launched, watched.exited) < watched.wall_s
    assert [record["step"] for _, record in watched.records] == [1, 2]
    # stamped when each line appeared: not before it was written, nor after the run ended (how soon
    # after depends on the machine's load: not asserted)
    assert all(record["written"] <= stamp <= watched.exited for stamp, record in watched.records)


@pytest.fixture(scope="module")
def bert_and_windows(tmp_path_factory):
    pytest.importorskip("accelerate")
    from benchmarks.peers.inputs import long_tail_windows, random_dna, save_model

    work = tmp_path_factory.mktemp("peers")
    rng = np.random.default_rng(0)
    model_dir = save_model(work / "bert", [random_dna(rng, 400) for _ in range(200)], "small")
    windows = long_tail_windows(work / "long_tail", model_dir, {"train": 24, "val": 8, "test": 8})
    return model_dir, windows, work


def test_long_tail_windows_fit_the_recipes_largest_bucket(bert_and_windows):
    import polars as pl
    from tokenizers import Tokenizer

    model_dir, windows, _ = bert_and_windows
    table = pl.read_parquet(windows)
    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tokens = np.array([len(tokenizer.encode(s).ids) for s in table["sequence"]])
    assert tokens.max() <= RECIPE_BOUNDS[-1] and tokens.min() >= 20
    assert {recipe_bucket(int(n)) for n in tokens} == {0, 1, 2}  # the lengths reach every bucket
    assert table.group_by("split").len().sort("split")["len"].to_list() == [8, 24, 8]
    assert table.filter(pl.col("split") == "train")["label"].sum() == 12  # balanced


def test_the_recipe_trains_inside_the_trainer_on_bucket_padded_batches(bert_and_windows):
    from benchmarks.peers import trainer as peer_trainer

    model_dir, windows, work = bert_and_windows
    out = work / "recipe"
    argv = ["--windows", str(windows), "--model-dir", str(model_dir), "--out-dir", str(out)]
    argv += ["--batching", "recipe", "--max-steps", "3", "--eval-every", "3", "--lr", "1e-3"]
    peer_trainer.main(argv)
    counted = json.loads((out / "rank-0.json").read_text())
    data = peer_trainer.load_windows(str(windows), peer_trainer.AutoTokenizer.from_pretrained(model_dir), 768)
    lengths = np.array(data["train"].lengths())
    batches = RecipeBatchSampler(lengths, seed=0).batches()[:3]
    expected = count_tokens(
        batches, lengths, [BucketPadCollator(0).width(int(lengths[b].max())) for b in batches]
    )
    assert (counted["real"], counted["padded"], counted["micro_batches"]) == (
        expected.real,
        expected.padded,
        3,
    )
    timeline = json.loads((out / "timeline.json").read_text())
    assert timeline["optimizer_steps"] == 3 and len(timeline["events"]["step_end"]) == 3
    assert 0.0 <= timeline["test_roc_auc"] <= 1.0 and (out / "model" / "config.json").exists()


def test_peer_order_batches_cover_the_train_split_for_every_peer(bert_and_windows):
    import polars as pl
    from tokenizers import Tokenizer

    from benchmarks.peers.order import KINDS, global_batches

    model_dir, windows, work = bert_and_windows
    table = pl.read_parquet(windows)
    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    lengths = [len(tokenizer.encode(s).ids) for s in table["sequence"]]
    manifest = table.select("id", "split", "label").with_columns(
        pl.Series("token_length", lengths), pl.Series("bucket", [int(n > 300) for n in lengths])
    )
    manifest.write_parquet(work / "manifest.parquet")
    (work / "summary.json").write_text(json.dumps({"batch_sizes": [3, 2], "max_tokens_per_batch": 900}))
    data = {
        "windows": str(windows),
        "manifest": str(work / "manifest.parquet"),
        "summary": str(work / "summary.json"),
    }
    plan = {"trainer": {"batch_size": 2}, "recipe": {"accumulation": 2}}
    n_train = 24
    for kind in KINDS:
        batches = global_batches(kind, data, plan, seed=0)
        assert set(i for batch in batches for i in batch) == set(range(n_train)), kind
        assert global_batches(kind, data, plan, seed=0, epoch=1) != batches, kind  # a new order
    errorseq = global_batches("errorseq's sampler", data, plan, seed=0)
    assert all(len(batch) in (2, 4, 6) for batch in errorseq)  # two ranks' equal slices joined
