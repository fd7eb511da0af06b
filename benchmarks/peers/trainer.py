"""The Hugging Face `Trainer` side of benchmarks/peers/compare.py: fine-tune the benchmark's BERT on a
windows parquet, the way a user of transformers would, under torchrun.

    torchrun --standalone --nproc_per_node 2 -m benchmarks.peers.trainer --windows W.parquet \\
        --model-dir MODEL --out-dir OUT --batching group_by_length --batch-size 16 --max-steps 60 ...

`--batching group_by_length`: transformers' LengthGroupedSampler (`train_sampling_strategy=
"group_by_length"`, the old `group_by_length=True`) and DataCollatorWithPadding (each batch padded
to its longest window). `--batching recipe`: the MetaSpliceAI recipe (peers/batching.py: buckets
256/512/768 tokens, 2/1/1 windows, padded to the bucket's bound) through the same Trainer.

Every rank writes OUT/rank-N.json (real and padded tokens and windows it trained on); rank 0
also writes OUT/timeline.json (wall-clock times of the Trainer's callbacks, the export and the
test prediction, and the validation and test ROC-AUC). The harness turns them into its tables.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np
import polars as pl
import torch
from sklearn.metrics import roc_auc_score
from transformers import (
    AutoModelForSequenceClassification,
    AutoTokenizer,
    DataCollatorWithPadding,
    Trainer,
    TrainerCallback,
    TrainingArguments,
)

from benchmarks.peers.batching import RECIPE_BOUNDS, BucketPadCollator, RecipeBatchSampler
from workflow_scripts.training.distributed import exit_without_teardown

TIMELINE = "timeline.json"


class Windows(torch.utils.data.Dataset):
    """Tokenised windows: items are {"input_ids", "labels"}, as a `datasets` map would give."""

    def __init__(self, input_ids: list[list[int]], labels: list[int]):
        self.input_ids, self.labels = input_ids, labels

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, index: int) -> dict:
        return {"input_ids": self.input_ids[index], "labels": self.labels[index]}

    def lengths(self) -> list[int]:
        return [len(ids) for ids in self.input_ids]


class Timeline(TrainerCallback):
    """Wall-clock times (time.time()) of the Trainer's events, on rank 0."""

    def __init__(self):
        self.events: dict[str, list[float]] = {}

    def mark(self, name: str) -> None:
        self.events.setdefault(name, []).append(time.time())

    def on_train_begin(self, args, state, control, **kwargs):
        self.mark("train_begin")

    def on_epoch_begin(self, args, state, control, **kwargs):
        self.mark("epoch_begin")

    def on_step_end(self, args, state, control, **kwargs):
        self.mark("step_end")

    def on_evaluate(self, args, state, control, **kwargs):
        self.mark("evaluate_end")

    def on_save(self, args, state, control, **kwargs):
        self.mark("save_end")


class PeerTrainer(Trainer):
    """The stock Trainer, counting the tokens of every micro-batch it trains on; with a
    `recipe_lengths`, its train loader is the MetaSpliceAI recipe's."""

    def __init__(self, *args, recipe_lengths: list[int] | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.recipe_lengths = recipe_lengths
        self.counted = {"real": 0, "padded": 0, "windows": 0, "micro_batches": 0}

    def training_step(self, model, inputs, num_items_in_batch=None):
        mask = inputs["attention_mask"]
        self.counted["real"] += int(mask.sum())
        self.counted["padded"] += mask.numel()
        self.counted["windows"] += mask.shape[0]
        self.counted["micro_batches"] += 1
        return super().training_step(model, inputs, num_items_in_batch)

    def get_train_dataloader(self):
        if self.recipe_lengths is None:
            return super().get_train_dataloader()
        sampler = RecipeBatchSampler(self.recipe_lengths, self.args.seed)
        loader = torch.utils.data.DataLoader(
            self.train_dataset,
            batch_sampler=sampler,
            collate_fn=BucketPadCollator(self.processing_class.pad_token_id),
            num_workers=self.args.dataloader_num_workers,
        )
        return self.accelerator.prepare(loader)  # dealt out to the ranks batch by batch


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--windows", required=True, help="parquet: sequence, label, split")
    parser.add_argument("--model-dir", required=True, help="BertForSequenceClassification + tokenizer")
    parser.add_argument("--out-dir", required=True)
    parser.add_argument("--batching", choices=("group_by_length", "recipe"), required=True)
    parser.add_argument("--batch-size", type=int, default=2, help="windows per rank (group_by_length)")
    parser.add_argument("--grad-accumulation", type=int, default=1)
    parser.add_argument("--max-steps", type=int, required=True, help="optimizer steps")
    parser.add_argument("--eval-every", type=int, required=True, help="validate and save every N steps")
    parser.add_argument("--eval-batch-size", type=int, default=64)
    parser.add_argument("--max-length", type=int, default=RECIPE_BOUNDS[-1])
    parser.add_argument("--lr", type=float, required=True)
    parser.add_argument("--weight-decay", type=float, default=0.01)
    parser.add_argument("--warmup-fraction", type=float, default=0.1)
    parser.add_argument("--min-lr-ratio", type=float, default=0.05)
    parser.add_argument("--log-every", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    return parser.parse_args(argv)


def load_windows(path: str, tokenizer, max_length: int) -> dict[str, Windows]:
    table = pl.read_parquet(path, columns=["sequence", "label", "split"])
    splits = {}
    for split in ("train", "val", "test"):
        rows = table.filter(pl.col("split") == split)
        ids = tokenizer(rows["sequence"].to_list(), truncation=True, max_length=max_length)["input_ids"]
        splits[split] = Windows(ids, [int(label) for label in rows["label"]])
    return splits


def roc_auc(prediction) -> float:
    logits = torch.as_tensor(prediction.predictions).float()
    return float(roc_auc_score(prediction.label_ids, torch.softmax(logits, -1)[:, 1].numpy()))


def training_arguments(args: argparse.Namespace) -> TrainingArguments:
    cpu = args.device == "cpu"
    return TrainingArguments(
        output_dir=str(Path(args.out_dir) / "checkpoints"),
        per_device_train_batch_size=args.batch_size,
        per_device_eval_batch_size=args.eval_batch_size,
        gradient_accumulation_steps=args.grad_accumulation,
        max_steps=args.max_steps,
        learning_rate=args.lr,
        weight_decay=args.weight_decay,
        adam_beta2=0.98,  # errorseq's AdamW betas (training/optim.py)
        max_grad_norm=1.0,
        lr_scheduler_type="cosine_with_min_lr",
        lr_scheduler_kwargs={"min_lr_rate": args.min_lr_ratio},
        warmup_steps=args.warmup_fraction,  # a fraction below 1
        train_sampling_strategy="group_by_length" if args.batching == "group_by_length" else "random",
        eval_strategy="steps",
        eval_steps=args.eval_every,
        save_strategy="steps",
        save_steps=args.eval_every,
        logging_steps=args.log_every,
        seed=args.seed,
        use_cpu=cpu,
        ddp_backend="gloo" if cpu and "LOCAL_RANK" in os.environ else None,  # torchrun on CPU
        ddp_find_unused_parameters=False,  # as errorseq's DDP (every parameter gets a gradient)
        dataloader_num_workers=0,  # errorseq collates in the training process too
        report_to="none",
        disable_tqdm=True,
    )


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    out = Path(args.out_dir)
    tokenizer = AutoTokenizer.from_pretrained(args.model_dir)
    data = load_windows(args.windows, tokenizer, args.max_length)
    model = AutoModelForSequenceClassification.from_pretrained(args.model_dir, num_labels=2)
    timeline = Timeline()
    trainer = PeerTrainer(
        model=model,
        args=training_arguments(args),
        train_dataset=data["train"],
        eval_dataset=data["val"],
        processing_class=tokenizer,
        data_collator=DataCollatorWithPadding(tokenizer),
        compute_metrics=lambda prediction: {"roc_auc": roc_auc(prediction)},
        callbacks=[timeline],
        recipe_lengths=data["train"].lengths() if args.batching == "recipe" else None,
    )
    trainer.train()
    timeline.mark("train_end")
    trainer.save_model(str(out / "model"))  # the export: weights + config (+ tokenizer)
    timeline.mark("export_end")
    test = trainer.predict(data["test"])
    timeline.mark("predict_end")
    rank = int(os.environ.get("RANK", "0"))
    (out / f"rank-{rank}.json").write_text(json.dumps(trainer.counted))
    if trainer.is_world_process_zero():
        history = [r for r in trainer.state.log_history if "eval_roc_auc" in r]
        record = {
            "events": timeline.events,
            "val_roc_auc": history[-1]["eval_roc_auc"] if history else None,
            "test_roc_auc": roc_auc(test),
            "test_windows": int(np.asarray(test.label_ids).shape[0]),
            "optimizer_steps": trainer.state.global_step,
        }
        (out / TIMELINE).write_text(json.dumps(record))
    if torch.distributed.is_initialized():  # the Trainer leaves its group to interpreter teardown
        torch.distributed.destroy_process_group()


if __name__ == "__main__":  # ends as errorseq's ranks do (see exit_without_teardown)
    exit_without_teardown(main)
