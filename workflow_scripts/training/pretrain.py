"""Masked-LM pretraining of the encoder on unlabeled windows; run under torchrun (launch --module).

Table of contents: configs → process group → unlabeled data (windows of the experiment or random
genome windows, bucketed like `train`) → MaskedLanguageModel around the classifier's encoder →
strategy engine → MaskedLMTrainer → export of the encoder state dict that `train` starts from.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
from pathlib import Path

import numpy as np
import torch

from workflow_scripts.bucketing.assign import assign_buckets
from workflow_scripts.training.checkpoint import CheckpointManager, run_signature
from workflow_scripts.training.batches import BatchCollator, SplitData, load_split
from workflow_scripts.training.distributed import DistContext, run_in_process_group
from workflow_scripts.errors import InputError, run_cli
from workflow_scripts.data.genome import Genome
from workflow_scripts.io_utils import atomic_path, write_json
from workflow_scripts.training.mlm import MaskedLanguageModel, MaskedLMTrainer, MaskingCollator, encoder_state
from workflow_scripts.models.builtin import MODEL_DEFAULTS, build_model, count_parameters
from workflow_scripts.training.strategies import build_engine
from workflow_scripts.training.telemetry import MetricsSink
from workflow_scripts.tokenization.tokenizers import load_tokenizer, window_token_lengths
from workflow_scripts.config.train import TrainConfig

SOURCES = ("train_windows", "all_windows", "genome")
VALIDATION_SEED = 1234
MAX_N_FRACTION = 0.1
SAMPLING_ROUNDS = 20


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    for name in ("--windows", "--manifest", "--bucket-summary", "--checkpoint-dir", "--out-encoder",
                 "--out-config", "--out-steps"):
        parser.add_argument(name, required=True)
    parser.add_argument("--model-config", required=True, help="the model: section as JSON")
    parser.add_argument("--train-config", required=True, help="train: with pretrain: overrides, JSON")
    parser.add_argument("--source", choices=SOURCES, default="all_windows")
    parser.add_argument("--mask-fraction", type=float, default=0.15)
    parser.add_argument("--genome-dir", default="results/genome", help="with --source genome")
    parser.add_argument("--genome-windows", type=int, default=5000, help="with --source genome")
    parser.add_argument("--experiment", default="experiment")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    args = parse_args(argv)
    if not 0 < args.mask_fraction < 1:
        raise InputError("config", "pretrain.mask_fraction", f"must be in (0, 1) (got {args.mask_fraction})")
    cfg = TrainConfig.from_json(args.train_config)
    run_in_process_group(cfg.strategy, cfg.seed, lambda ctx: run_pretraining(args, cfg, ctx))


def run_pretraining(args: argparse.Namespace, cfg: TrainConfig, ctx: DistContext) -> None:
    summary = json.loads(Path(args.bucket_summary).read_text())
    tokenizer = load_tokenizer(summary["tokenizer"])
    max_tokens = int(summary["max_length"])
    model_cfg = {**MODEL_DEFAULTS, **json.loads(args.model_config)}
    train, val = unlabeled_data(args, summary, tokenizer, cfg.seed)
    model = MaskedLanguageModel(build_model(model_cfg, tokenizer.vocab_size, max_tokens), tokenizer.vocab_size)
    torch.manual_seed(cfg.seed + ctx.rank)
    if ctx.is_main:
        print(f"pretraining {args.experiment} (masked LM, source {args.source}): "
              f"{count_parameters(model):,} parameters, {len(train)} train / {len(val)} val windows, "
              f"world size {ctx.world_size}", flush=True)
    collators = tuple(MaskingCollator(BatchCollator(split, tokenizer, max_tokens), tokenizer, args.mask_fraction, seed)
                      for split, seed in ((train, None), (val, VALIDATION_SEED)))
    genome_index = Path(args.genome_dir) / "index.tsv" if args.source == "genome" else None
    signature = run_signature(
        cfg.to_dict(), model_cfg, ctx.world_size,
        {"windows": args.windows, "manifest": args.manifest, "summary": args.bucket_summary,
         "genome": genome_index},
        source=args.source, mask_fraction=args.mask_fraction,
        genome_windows=args.genome_windows if args.source == "genome" else None)
    trainer = MaskedLMTrainer(
        cfg, ctx, lambda total: build_engine(model, ctx, cfg, total, max(summary["batch_sizes"])),
        train, val, collators, summary["batch_sizes"],
        CheckpointManager(args.checkpoint_dir, ctx.is_main, ctx.barrier, signature),
        MetricsSink(Path(args.checkpoint_dir) / "steps.partial.jsonl", ctx.is_main, None),
    )
    progress = trainer.train()
    final_state = trainer.engine.full_state_dict()
    trainer.metrics.close()
    if ctx.is_main:
        export(args, trainer, progress, final_state)


def unlabeled_data(args, summary: dict, tokenizer, seed: int) -> tuple[SplitData, SplitData]:
    """Pretraining windows (labels unused) and the validation split for the masked-LM loss."""
    splits = {name: load_split(args.windows, args.manifest, name) for name in ("train", "val", "test")}
    if args.source == "train_windows":
        train = splits["train"]
    elif args.source == "all_windows":
        train = concat_splits(list(splits.values()))
    else:
        train = random_genome_windows(args.genome_dir, args.genome_windows, splits["train"].lengths,
                                      seed, tokenizer, summary["boundaries"])
    if len(train) == 0:
        raise InputError(args.manifest, "split", "no windows to pretrain on")
    return train, splits["val"]


def concat_splits(parts: list[SplitData]) -> SplitData:
    lists = ("ids", "gene_ids", "sequences")
    return SplitData(**{name: sum((getattr(p, name) for p in parts), []) for name in lists},
                     **{name: np.concatenate([getattr(p, name) for p in parts])
                        for name in ("labels", "lengths", "token_lengths", "buckets")})


def random_genome_windows(genome_dir: str, n: int, lengths: np.ndarray, seed: int, tokenizer,
                          boundaries: list[int]) -> SplitData:
    """`n` windows at uniform random genome positions, lengths drawn from the train windows'.
    Windows more than MAX_N_FRACTION N (assembly gaps, telomeres) are drawn again."""
    genome = Genome.open_cached(genome_dir)
    rng = np.random.default_rng(seed)
    starts, widths = np.empty(0, np.int64), np.empty(0, np.int64)
    for _ in range(SAMPLING_ROUNDS):
        more_starts, more_widths = draw_windows(genome, rng, 2 * (n - len(starts)), lengths)
        keep = [np.count_nonzero(genome.sequence[s : s + w] == ord("N")) <= MAX_N_FRACTION * w
                for s, w in zip(more_starts, more_widths)]
        starts = np.concatenate([starts, more_starts[keep]])[:n]
        widths = np.concatenate([widths, more_widths[keep]])[:n]
        if len(starts) == n:
            break
    else:
        raise InputError(genome_dir, "pretrain.source", f"found only {len(starts)} of {n} random windows "
                         f"with at most {MAX_N_FRACTION:.0%} N; is the genome mostly gaps?")
    sequences = [bytes(genome.sequence[s : s + w]).decode("ascii") for s, w in zip(starts, widths)]
    token_lengths = window_token_lengths(tokenizer, lambda: sequences, widths)
    return SplitData(ids=[f"genome{i}" for i in range(n)], gene_ids=[""] * n, sequences=sequences,
                     labels=np.zeros(n, dtype=np.int64), lengths=widths.astype(np.int64),
                     token_lengths=np.asarray(token_lengths, dtype=np.int64),
                     buckets=assign_buckets(token_lengths, boundaries).astype(np.int64))


def draw_windows(genome: Genome, rng, count: int, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(genome offsets, widths) of `count` windows, chromosomes weighted by length."""
    chrom = rng.choice(len(genome), count, p=genome.lengths / genome.lengths.sum())
    widths = np.minimum(rng.choice(lengths if len(lengths) else np.array([200]), count), genome.lengths[chrom])
    starts = genome.offsets[chrom] + (rng.random(count) * (genome.lengths[chrom] - widths + 1)).astype(np.int64)
    return starts, widths.astype(np.int64)


def export(args, trainer: MaskedLMTrainer, progress, final_state: dict) -> None:
    best = trainer.checkpoints.load_best()
    with atomic_path(args.out_encoder) as tmp:
        torch.save(encoder_state(best if best is not None else final_state), tmp)
    write_json(args.out_config, {
        "experiment": args.experiment, "objective": "masked_lm", "source": args.source,
        "mask_fraction": args.mask_fraction, "train": trainer.cfg.to_dict(),
        "optimizer_steps": progress.step, "best_epoch": progress.best_epoch,
        "best_val_loss": progress.best_val_loss, "validation": progress.history,
        "strategy": trainer.engine.describe(),
    })
    with atomic_path(args.out_steps) as tmp:
        shutil.copyfile(trainer.metrics.path, tmp)


if __name__ == "__main__":
    run_cli(main)
