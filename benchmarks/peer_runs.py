"""One run of each peer (benchmarks/peers.py): the command, and what it measured.

errorseq runs its real `train` rule entry point (workflow_scripts.rules.train: torchrun, DDP,
gloo on CPU); the Trainer peers run benchmarks/peer_trainer.py under torchrun. Both are watched
by peer_watch (wall clock, peak RSS per rank). errorseq's times come from its own telemetry and
outputs: the step log's records (the time each appeared; `step_s` says when its steps began), the
checkpoint folder's `latest` pointer and the exported files' modification times. The Trainer's
come from its callbacks (peer_trainer.Timeline). Test ROC-AUC is scored here, by one function
for every peer, on the exported weights.
"""

from __future__ import annotations

import json
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

import torch

from benchmarks.peer_batching import TokenCount, errorseq_batches, errorseq_tokens
from benchmarks.peer_score import errorseq_model, test_roc_auc
from benchmarks.peer_watch import Watched, watch
from workflow_scripts.config.sections import section_defaults
from workflow_scripts.training.batches import load_split

STEP_LOG_PARTIAL = "steps.partial.jsonl"  # training/run.py: the step log while training runs


@dataclass(frozen=True)
class Launch:
    """How the peers are started: processes, cores, device, seed, LR and epochs."""

    ranks: int
    threads: int
    device: str
    seed: int
    lr: float
    epochs: int


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
    paths = {
        "--windows": data["windows"],
        "--manifest": data["manifest"],
        "--bucket-summary": data["summary"],
        "--checkpoint-dir": run / "checkpoints",
        "--out-model": run / "model.pt",
        "--out-config": run / "model.json",
        "--out-steps": run / "steps.jsonl",
        "--experiment": data["name"],
    }
    config = json.dumps(errorseq_config(model_dir, launch))
    command = [sys.executable, "-m", "workflow_scripts.rules.train", *resources, "--config", config]
    command += [str(part) for pair in paths.items() for part in pair]
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
    outputs = {"--out-predictions": run / "predictions.parquet", "--out-metrics": run / "metrics.json"}
    inputs = {"--windows": data["windows"], "--manifest": data["manifest"], "--experiment": data["name"]}
    inputs.update({"--model": run / "model.pt", "--model-config": run / "model.json"})
    command = [sys.executable, "-m", "workflow_scripts.rules.evaluate", "--config", '{"evaluate": {}}']
    command += [str(part) for pair in {**inputs, **outputs}.items() for part in pair]
    log = run / "evaluate.log"
    watched = checked(watch(command, log), log, "errorseq evaluate")
    metrics = json.loads((run / "metrics.json").read_text())
    return {"own_test_roc_auc": metrics["roc_auc"], "test_s": watched.wall_s}


def errorseq_timeline(watched: Watched, run: Path) -> dict:
    """Seconds of each phase from the step log (arrival times; a train record's `step_s` times
    its steps, so its first step began arrival - steps * step_s) and the outputs' mtimes."""
    train, val, spans = [], [], []  # spans: each epoch's steps, (first began, last done)
    last_step, epoch = 0, 0
    for arrived, record in watched.records:
        if record["kind"] == "val":
            val.append((arrived, train[-1][0]))
            continue
        steps = record["step"] - last_step
        if record["epoch"] != epoch:
            spans.append([arrived - steps * record["step_s"], arrived])
            epoch = record["epoch"]
        spans[-1][1] = arrived
        train.append((arrived, steps * record["step_s"]))
        last_step = record["step"]
    starts = [began for began, _ in spans]
    saved = (run / "checkpoints" / "latest").stat().st_mtime
    exported = max((run / name).stat().st_mtime for name in ("model.pt", "model.json", "steps.jsonl"))
    ends = starts[1:] + [saved]  # a checkpoint ends where the next epoch's steps begin
    return {
        "launched_to_export_s": exported - watched.launched,
        "startup_s": starts[0] - watched.launched,
        "train_s": sum(seconds for _, seconds in train),
        "train_cpu_s": sum(watched.cpu_between(began, done) for began, done in spans),
        "validation_s": sum(done - began for done, began in val),
        "checkpoint_s": sum(end - done for end, (done, _) in zip(ends, val)),
        "export_s": exported - saved,
        "teardown_s": watched.exited - exported,
    }


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
def run_trainer(data: dict, model_dir: Path, launch: Launch, run: Path, plan: dict) -> PeerResult:
    """plan: batching (group_by_length | recipe), batch_size, accumulation, steps, eval_every."""
    run = fresh(run)
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone"]
    command += [f"--nproc_per_node={launch.ranks}", "--max_restarts=0", "-m", "benchmarks.peer_trainer"]
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
    command += [str(part) for pair in options.items() for part in pair]
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


def trainer_timeline(events: dict[str, list[float]], watched: Watched) -> dict:
    """Seconds of each phase from the callbacks' times: a step lasts from the end of whatever came
    before it (the previous step, a validation, a save, an epoch's start) to its on_step_end."""
    marks = sorted((t, name) for name, times in events.items() for t in times)
    train_s = train_cpu_s = validation_s = checkpoint_s = 0.0
    previous = None
    for t, name in marks:
        if name == "step_end" and previous is not None:
            train_s += t - previous
            train_cpu_s += watched.cpu_between(previous, t)
        elif name == "evaluate_end":
            validation_s += t - previous
        elif name == "save_end":
            checkpoint_s += t - previous
        if name in ("epoch_begin", "step_end", "evaluate_end", "save_end"):
            previous = t
    exported = events["export_end"][0]
    return {
        "launched_to_export_s": exported - watched.launched,
        "startup_s": events["epoch_begin"][0] - watched.launched,
        "train_s": train_s,
        "train_cpu_s": train_cpu_s,
        "validation_s": validation_s,
        "checkpoint_s": checkpoint_s,
        "export_s": exported - events["train_end"][0],
        "teardown_s": watched.exited - events["predict_end"][0],
    }
