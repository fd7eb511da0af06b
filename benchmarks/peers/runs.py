"""One run of each peer (benchmarks/peers/compare.py): the command, and what it measured.

errorseq runs its real `train` rule entry point (workflow_scripts.rules.train: torchrun, DDP,
gloo on CPU); the Trainer peers run benchmarks/peers/trainer.py under torchrun. Both are watched
from outside (peers/watch.py: wall clock, peak RSS per rank, CPU seconds, the step log), which
also splits each run's time into its phases. Test ROC-AUC is scored here, by one function for
every peer, on the exported weights.
"""

from __future__ import annotations

import json
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl
import torch

from benchmarks.peers.batching import TokenCount, errorseq_batches, errorseq_tokens
from benchmarks.peers.watch import Watched, errorseq_timeline, trainer_timeline, watch
from benchmarks.runner import flags
from testkit.rule_commands import evaluate_args, train_path_args
from workflow_scripts.config.sections import section_defaults
from workflow_scripts.training.batches import load_split

STEP_LOG_PARTIAL = "steps.partial.jsonl"  # training/run.py: the step log while training runs


@dataclass(frozen=True)
class Launch:
    """How the peers are started: processes, cores, device, seed, LR and epochs."""

    ranks: int
    threads: int
    device: str = "cpu"
    seed: int = 0
    lr: float = 1e-3
    epochs: int = 1


@dataclass
class PeerResult:
    """One peer on one data set: tokens it trained on and where its wall time went (seconds)."""

    tool: str
    steps: int
    tokens: TokenCount
    launched_to_export_s: float
    startup_s: float
    train_s: float
    train_cpu_s: float  # CPU seconds of all ranks over the same steps
    validation_s: float
    checkpoint_s: float
    export_s: float
    teardown_s: float
    peak_rss_mb: dict[int, float]
    test_roc_auc: float
    extra: dict = field(default_factory=dict)

    @property
    def real_per_s(self) -> float:
        return self.tokens.real / self.train_s

    @property
    def padded_per_s(self) -> float:
        return self.tokens.padded / self.train_s

    @property
    def real_per_cpu_s(self) -> float:
        return self.tokens.real / self.train_cpu_s


def fresh(folder: Path) -> Path:
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return folder


def checked(watched: Watched, log: Path, what: str) -> Watched:
    if watched.returncode:
        raise SystemExit(f"peers: {what} failed (rc {watched.returncode}):\n{log.read_text()[-3000:]}")
    return watched


# ---- errorseq ---------------------------------------------------------------------------------
def errorseq_config(model_dir: Path, launch: Launch) -> dict:
    """model and train sections: the HF backbone, fp32 DDP, the same LR and schedule as the
    Trainer's. Keys a checkout may lack (call inputs, class weights) are set only where known."""
    model = {"backbone": "hf", "path": str(model_dir), "init": "pretrained"}
    if "call_inputs" in section_defaults("model"):
        model["call_inputs"] = []  # the sequence alone, as the Trainer sees it
    train = {
        "strategy": "ddp",
        "precision": "fp32",
        "epochs": launch.epochs,
        "lr": launch.lr,
        "seed": launch.seed,
        "checkpoint_every_steps": 1_000_000,  # a checkpoint per epoch only, as the Trainer's
    }
    if "class_weight" in section_defaults("train"):
        train["class_weight"] = "none"  # the Trainer's plain cross-entropy
    return {"model": model, "train": train}


def run_errorseq(data: dict, model_dir: Path, launch: Launch, run: Path) -> PeerResult:
    run = fresh(run)
    resources = ["--gpus", str(launch.ranks if launch.device == "cuda" else 0)]
    resources += ["--cpu-procs", str(launch.ranks), "--threads", str(launch.threads)]
    inputs = {key: Path(data[key]) for key in ("windows", "manifest", "summary")}
    config = json.dumps(errorseq_config(model_dir, launch))
    command = [sys.executable, "-m", "workflow_scripts.rules.train", *resources, "--config", config]
    command += train_path_args(inputs, run, data["name"])
    log = run / "train.log"
    watched = checked(
        watch(command, log, run / "checkpoints" / STEP_LOG_PARTIAL, ranks=launch.ranks), log, "errorseq train"
    )
    timeline = errorseq_timeline(watched, run)
    tokens, telemetry_real = errorseq_token_count(data, launch, watched)
    if abs(tokens.real - telemetry_real) > 1e-6 * tokens.real + 1:
        raise SystemExit(
            f"peers: replayed errorseq batches hold {tokens.real} real tokens, its step log {telemetry_real}"
        )
    state = torch.load(run / "model.pt", map_location="cpu", weights_only=True)
    return PeerResult(
        tool="errorseq",
        steps=json.loads((run / "model.json").read_text())["optimizer_steps"],
        tokens=tokens,
        peak_rss_mb=watched.peak_rss_mb,
        test_roc_auc=test_roc_auc(errorseq_model(state, model_dir), model_dir, data["windows"]),
        extra=evaluate_rule(data, run),
        **timeline,
    )


def evaluate_rule(data: dict, run: Path) -> dict:
    """errorseq's evaluate rule on the test split (with its baselines and bootstrap), timed."""
    inputs = {key: Path(data[key]) for key in ("windows", "manifest")}
    paths = evaluate_args(
        inputs,
        run / "model.pt",
        run / "model.json",
        data["name"],
        run / "predictions.parquet",
        run / "metrics.json",
    )
    command = [sys.executable, *paths, "--config", '{"evaluate": {}}']
    log = run / "evaluate.log"
    watched = checked(watch(command, log), log, "errorseq evaluate")
    metrics = json.loads((run / "metrics.json").read_text())
    return {"own_test_roc_auc": metrics["roc_auc"], "test_s": watched.wall_s}


def errorseq_token_count(data: dict, launch: Launch, watched: Watched) -> tuple[TokenCount, float]:
    """Tokens of the batches the train rule drew (its sampler replayed) and the real tokens its
    step log reports (tokens_per_s x step_s x steps), which must agree."""
    summary = json.loads(Path(data["summary"]).read_text())
    train = load_split(data["windows"], data["manifest"], "train")
    steps = []
    for epoch in range(launch.epochs):
        steps += errorseq_batches(
            train.buckets, summary["batch_sizes"], train.token_lengths, launch.ranks, launch.seed, epoch
        )
    counted = errorseq_tokens(steps, train.token_lengths, int(summary["max_length"]))
    last, logged = 0, 0.0
    for _, record in watched.records:
        if record["kind"] == "train":
            logged += record["tokens_per_s"] * record["step_s"] * (record["step"] - last)
            last = record["step"]
    return counted, logged


# ---- the Trainer peers -------------------------------------------------------------------------
def trainer_command(data: dict, model_dir: Path, launch: Launch, run: Path, plan: dict) -> list[str]:
    """torchrun of benchmarks.peers.trainer with the plan's batching, steps and the launch's LR and seed."""
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone"]
    command += [f"--nproc_per_node={launch.ranks}", "--max_restarts=0", "-m", "benchmarks.peers.trainer"]
    options = {
        "--windows": data["windows"],
        "--model-dir": model_dir,
        "--out-dir": run,
        "--batching": plan["batching"],
        "--batch-size": plan["batch_size"],
        "--grad-accumulation": plan["accumulation"],
        "--max-steps": plan["steps"],
        "--eval-every": plan["eval_every"],
        "--lr": launch.lr,
        "--seed": launch.seed,
        "--device": launch.device,
    }
    return command + flags(options)


def run_trainer(data: dict, model_dir: Path, launch: Launch, run: Path, plan: dict) -> PeerResult:
    """plan: batching (group_by_length | recipe), batch_size, accumulation, steps, eval_every."""
    run = fresh(run)
    command = trainer_command(data, model_dir, launch, run, plan)
    env = {"OMP_NUM_THREADS": str(max(1, launch.threads // launch.ranks)), "TOKENIZERS_PARALLELISM": "false"}
    if launch.device == "cpu":
        env["CUDA_VISIBLE_DEVICES"] = ""
    log = run / "train.log"
    watched = checked(watch(command, log, env=env, ranks=launch.ranks), log, f"Trainer ({plan['batching']})")
    record = json.loads((run / "timeline.json").read_text())
    ranks = [json.loads((run / f"rank-{r}.json").read_text()) for r in range(launch.ranks)]
    tokens = TokenCount(
        *(sum(rank[key] for rank in ranks) for key in ("real", "padded", "windows", "micro_batches"))
    )
    from transformers import AutoModelForSequenceClassification

    model = AutoModelForSequenceClassification.from_pretrained(str(run / "model"))
    return PeerResult(
        tool="Trainer, group_by_length" if plan["batching"] == "group_by_length" else "MetaSpliceAI recipe",
        steps=record["optimizer_steps"],
        tokens=tokens,
        peak_rss_mb=watched.peak_rss_mb,
        test_roc_auc=test_roc_auc(model, model_dir, data["windows"]),
        extra={
            "own_test_roc_auc": record["test_roc_auc"],
            "test_s": _span(record, "export_end", "predict_end"),
        },
        **trainer_timeline(record["events"], watched),
    )


def _span(record: dict, began: str, ended: str) -> float:
    return record["events"][ended][0] - record["events"][began][0]


# ---- one scorer for every peer ---------------------------------------------------------------
def errorseq_model(state: dict, model_dir: Path):
    """The exported state dict (HFSequenceClassifier: `hf.` + the BERT's own keys) in a BERT."""
    from transformers import AutoModelForSequenceClassification

    model = AutoModelForSequenceClassification.from_pretrained(str(model_dir), num_labels=2)
    strange = [key for key in state if not key.startswith("hf.")]
    if strange:
        raise SystemExit(f"peers: errorseq's model.pt holds keys outside the BERT: {strange[:3]}")
    model.load_state_dict({key.removeprefix("hf."): value for key, value in state.items()})
    return model


@torch.no_grad()
def test_roc_auc(model, model_dir: Path, windows: str, batch_size: int = 64) -> float:
    """ROC-AUC of P(label 1) on the test split: the same tokenizer, batching and maths for all."""
    from sklearn.metrics import roc_auc_score
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    test = pl.read_parquet(windows, columns=["sequence", "label", "split"]).filter(pl.col("split") == "test")
    encoded = tokenizer(test["sequence"].to_list())["input_ids"]
    order = np.argsort([len(ids) for ids in encoded], kind="stable")
    model.eval()
    scores = np.zeros(len(encoded))
    for start in range(0, len(order), batch_size):
        rows = order[start : start + batch_size]
        batch = tokenizer.pad({"input_ids": [encoded[i] for i in rows]}, return_tensors="pt")
        logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
        scores[rows] = torch.softmax(logits.float(), -1)[:, 1].numpy()
    return float(roc_auc_score(test["label"].to_numpy(), scores))
