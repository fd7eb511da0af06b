"""Run one GPU case (benchmarks/gpu/cases.py) and read what it measured; and DeepSpeed's CPUAdam
JIT build, timed in the background while the inputs are made.

A case trains with the train rule's entry point (`--gpus 1`: one process per GPU, NCCL; or its
torchrun2 / cpu2 launcher) in work/runs/<case>/, then, where the case asks, evaluates the model.
Its result: the device and backend the run logged, its strategy line, median step time,
windows/s and real tokens/s over the step-log records after the first two (warm-up), the peak CUDA
memory, the last loss; or the error's last lines.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import time
from pathlib import Path

from benchmarks.gpu.cases import Case, train_section
from benchmarks.gpu.inputs import bert_dir, bucket_dir, windows_path
from benchmarks.runner import PYTHON, run_logged
from testkit.rule_commands import evaluate_args, train_path_args
from workflow_scripts.config.types import complete_typed_sections
from workflow_scripts.training.run_spec import RunSpec, write_launch_file

EXPERIMENT = "fp_vs_tp"


def slug(name: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in name).strip("_")


def case_inputs(work: Path, case: Case) -> dict[str, Path]:
    bucket = bucket_dir(work, case.data)
    return {
        "windows": windows_path(work),
        "manifest": bucket / "manifest.parquet",
        "summary": bucket / "summary.json",
    }


def train_command(case: Case, work: Path, run: Path, steps: int, threads: int) -> list[str]:
    model = {**case.model}
    if model.get("path") == "BERT_DIR":
        model["path"] = str(bert_dir(work))
    sections = {"model": model, "train": train_section(case, steps)}
    config = ["--config", json.dumps(sections)]
    paths = train_path_args(case_inputs(work, case), run, EXPERIMENT)
    if case.launcher == "torchrun2":  # the worker itself, two ranks, as torchrun starts it
        launcher = ["-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2", "--max_restarts=0"]
        launch_file = worker_launch_file(case_inputs(work, case), run, sections)
        worker = ["-m", "workflow_scripts.training.worker", "--launch-file", launch_file]
        return [PYTHON, *launcher, *worker]
    gpus = ["--gpus", "0", "--cpu-procs", "2"] if case.launcher == "cpu2" else ["--gpus", str(case.ngpu)]
    return [PYTHON, "-m", "workflow_scripts.rules.train", *gpus, "--threads", str(threads), *paths, *config]


def worker_launch_file(inputs: dict[str, Path], run: Path, sections: dict) -> str:
    """The launch file training.launch would write for this run (the train rule's paths)."""
    spec = RunSpec(
        experiment=EXPERIMENT,
        windows=str(inputs["windows"]),
        manifest=str(inputs["manifest"]),
        bucket_summary=str(inputs["summary"]),
        checkpoint_dir=str(run / "checkpoints"),
        out_weights=str(run / "model.pt"),
        out_config=str(run / "model.json"),
        out_steps=str(run / "steps.jsonl"),
    )
    write_launch_file("classification", complete_typed_sections(sections, required=("model", "train")), spec)
    return str(spec.launch_file)


def run_case(case: Case, work: Path, steps: int, threads: int) -> dict:
    run = work / "runs" / slug(case.name)
    shutil.rmtree(run, ignore_errors=True)
    run.mkdir(parents=True)
    command = train_command(case, work, run, steps, threads)
    rc, seconds = run_logged(command, run / "train.log", case.timeout_s, env={"NCCL_DEBUG": "WARN"})
    result = {"rc": rc, "wall_s": round(seconds, 1), **summarise(run, rc)}
    if case.evaluate and rc == 0:
        result.update(evaluate(case_inputs(work, case), run))
    return result


def grep_after(text: str, marker: str, end: str) -> str | None:
    at = text.find(marker)
    if at < 0:
        return None
    rest = text[at + len(marker) :]
    return rest[: rest.find(end)] if end in rest else rest


def failure(log: str) -> str:
    """The error's last two distinct lines (errorseq's one-line errors first)."""
    lines = [line for line in log.splitlines() if line.strip()]
    errors = [line for line in lines if "Error" in line or "error" in line or "refus" in line.lower()]
    picked = [line for line in lines if "Duplicate GPU" in line or "errorseq:" in line] or errors
    return " / ".join(dict.fromkeys((picked or lines or ["(no output)"])[-2:]))[:400]


def summarise(run: Path, rc: int) -> dict:
    log = (run / "train.log").read_text(errors="replace") if (run / "train.log").exists() else ""
    out = {
        "device": grep_after(log, "device ", ","),
        "backend": grep_after(log, "backend ", "\n"),
        "strategy": grep_after(log, "strategy: ", "\n"),
    }
    if rc:
        return {**out, "error": failure(log)}
    out |= step_log(run / "steps.jsonl")
    out["parameters"] = grep_after(log, f"{EXPERIMENT}: ", " parameters")
    if (run / "deepspeed_config.json").exists():
        out["deepspeed_json"] = deepspeed_line(json.loads((run / "deepspeed_config.json").read_text()))
    return out


def step_log(path: Path) -> dict:
    """Medians over the train records after the first two, the peak CUDA memory, validation."""
    steps = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    train = [r for r in steps if r["kind"] == "train"]
    timed = train[2:] or train
    return {
        "steps": train[-1]["step"] if train else 0,
        "step_ms": 1000 * statistics.median(r["step_s"] for r in timed),
        "windows_per_s": statistics.median(r["windows_per_s"] for r in timed),
        "tokens_per_s": statistics.median(r["tokens_per_s"] for r in timed),
        "gpu_peak_mb": max((r["gpu_peak_mb"] for r in train if r["gpu_peak_mb"] is not None), default=None),
        "last_loss": train[-1]["loss"] if train else None,
        "val": [
            {k: r[k] for k in ("val_loss", "val_accuracy", "val_roc_auc")}
            for r in steps
            if r["kind"] == "val"
        ],
    }


def deepspeed_line(config: dict) -> str:
    zero = config["zero_optimization"]
    offload = "".join(
        f", {k} {v['device']} pin {v['pin_memory']}" for k, v in zero.items() if k.startswith("offload")
    )
    return (
        f"stage {zero['stage']}, bf16 {config['bf16']['enabled']}, "
        f"fp16 {config['fp16']['enabled']}, overlap_comm {zero['overlap_comm']}" + offload
    )


def evaluate(inputs: dict[str, Path], run: Path) -> dict:
    paths = evaluate_args(
        inputs,
        run / "model.pt",
        run / "model.json",
        EXPERIMENT,
        run / "predictions.parquet",
        run / "metrics.json",
    )
    command = [PYTHON, *paths, "--config", '{"evaluate": {"batch_size": 256}}']
    rc, seconds = run_logged(command, run / "evaluate.log", 300)
    if rc:
        return {"evaluate": f"rc {rc}: " + (run / "evaluate.log").read_text()[-300:]}
    metrics = json.loads((run / "metrics.json").read_text())
    return {
        "evaluate": f"n {metrics['n']}, roc_auc {metrics['roc_auc']:.3f}, accuracy "
        f"{metrics['accuracy']:.3f} ({seconds:.1f} s wall)"
    }


CPUADAM_SNIPPET = r"""
import time, torch
began = time.monotonic()
from deepspeed.ops.op_builder import CPUAdamBuilder
CPUAdamBuilder().load()
build = time.monotonic() - began
from deepspeed.ops.adam import DeepSpeedCPUAdam
n = 25_000_000
def bench(make):
    p = torch.nn.Parameter(torch.randn(n)); p.grad = torch.randn(n)
    opt = make([p]); opt.step()
    t = time.monotonic()
    for _ in range(5): opt.step()
    return (time.monotonic() - t) / 5 * 1000
ds = bench(lambda ps: DeepSpeedCPUAdam(ps, lr=1e-3, adamw_mode=True))
tv = bench(lambda ps: torch.optim.AdamW(ps, lr=1e-3))
print(f"CPUADAM build_s={build:.1f} ds_cpu_adam_step_ms={ds:.1f} torch_adamw_step_ms={tv:.1f} "
      f"params={n} threads={torch.get_num_threads()}")
"""


def start_cpuadam(work: Path) -> tuple[subprocess.Popen, float]:
    """Build (JIT) and time DeepSpeed's CPUAdam in the background while the inputs are made."""
    (work / "logs").mkdir(parents=True, exist_ok=True)
    handle = (work / "logs" / "cpuadam.log").open("w")
    process = subprocess.Popen(
        [PYTHON, "-c", CPUADAM_SNIPPET],
        stdout=handle,
        stderr=subprocess.STDOUT,
        env={**os.environ, "TORCH_EXTENSIONS_DIR": str(work / "torch_ext")},
    )
    return process, time.monotonic()


def finish_cpuadam(work: Path, process: subprocess.Popen, began: float) -> dict:
    try:
        rc = process.wait(timeout=420)
    except subprocess.TimeoutExpired:
        process.kill()
        rc = 124
    seconds = time.monotonic() - began
    text = (work / "logs" / "cpuadam.log").read_text(errors="replace")
    line = next((row for row in text.splitlines() if row.startswith("CPUADAM")), None)
    return {"rc": rc, "wall_s": round(seconds, 1), "result": line or text.strip().splitlines()[-1][-300:]}
