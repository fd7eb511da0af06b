"""GPU check: every training strategy and precision on CUDA, with step time and peak memory.

    python -m benchmarks.gpu_check [--work-dir results/gpu_check] [--groups cnn,hf,transformer,cpuadam,shapes]
                                   [--steps 150] [--deadline-s 540] [--out results.json]

Builds the inputs from scratch in --work-dir (demo genome of --n-genes genes → extract →
bucket with the nucleotide tokenizer; a learnt BPE tokenizer and a BERT config for the HF
cases), then trains each case with `python -m workflow_scripts.rules.train --gpus 1` (one process
per GPU, NCCL), one after another, for --steps optimizer steps, and evaluates some of the
models. Prints a Markdown table per group: the device and backend the run logged, its
strategy line, median step time, windows/s and real tokens/s over the step-log records after
the first two (warm-up), the peak CUDA memory (torch.cuda.max_memory_allocated, `gpu_peak_mb`
in steps.jsonl) and the last logged loss. A case that fails is a row with the error's last
line; the rest still run. Cases not started before --deadline-s are listed as skipped.
`benchmarks/gpu_check.sh` wraps this with an environment report.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.common import print_table

PY = sys.executable
DEMO_CNN = {"arch": "cnn", "d_model": 32, "n_layers": 3, "kernel_size": 9, "dropout": 0.1}  # config.yaml
SMALL_TRANSFORMER = {"arch": "transformer", "d_model": 256, "n_layers": 4, "n_heads": 4, "dropout": 0.1}
MEDIUM_TRANSFORMER = {"arch": "transformer", "d_model": 512, "n_layers": 8, "n_heads": 8, "dropout": 0.1}
BERT = {
    "hidden_size": 256,
    "num_hidden_layers": 4,
    "num_attention_heads": 4,
    "intermediate_size": 1024,
    "max_position_embeddings": 512,
}


@dataclass
class Case:
    name: str
    group: str
    model: dict
    train: dict
    data: str = "nt"  # nt (nucleotides, 12,800-token batches), nt64k (65,536), bpe
    launcher: str = (
        "gpu"  # gpu: rules.train --gpus 1; torchrun2: 2 ranks on one GPU; cpu2: rules.train --gpus 0
    )
    evaluate: bool = False
    timeout_s: int = 240
    result: dict = field(default_factory=dict)


def cases(steps: int) -> list[Case]:
    def t(**kw):
        return {
            "epochs": 1,
            "max_steps": steps,
            "log_every_steps": 10,
            "checkpoint_every_steps": steps,
            "lr": 0.003,
            **kw,
        }

    ds = dict(strategy="deepspeed")
    hf_ckpt = "hf-ckpt"  # placeholder, replaced by the BERT directory in run_case

    def cnn(name: str, train: dict, **options) -> Case:
        return Case(name, "cnn", DEMO_CNN, train, **options)

    out = [
        cnn("cnn ddp fp32", t(precision="fp32")),
        cnn("cnn ddp bf16", t(precision="bf16")),
        cnn("cnn ddp fp16 (GradScaler)", t(precision="fp16")),
        cnn("cnn fsdp fp32", t(strategy="fsdp", precision="fp32")),
        cnn("cnn fsdp auto (bf16)", t(strategy="fsdp", precision="auto")),
        cnn("cnn fsdp bf16 offload_params", t(strategy="fsdp", precision="bf16", offload_params=True)),
        cnn("cnn ZeRO-0 fp32", t(**ds, zero_stage=0, precision="fp32")),
        cnn("cnn ZeRO-1 auto (bf16)", t(**ds, zero_stage=1, precision="auto")),
        cnn("cnn ZeRO-2 auto (bf16)", t(**ds, zero_stage=2, precision="auto")),
        cnn("cnn ZeRO-2 fp16", t(**ds, zero_stage=2, precision="fp16")),
        cnn("cnn ZeRO-3 auto (bf16)", t(**ds, zero_stage=3, precision="auto"), evaluate=True),
        cnn(
            "cnn ZeRO-2 bf16 offload_optimizer",
            t(**ds, zero_stage=2, precision="bf16", offload_optimizer=True),
        ),
        cnn(
            "cnn ZeRO-3 bf16 offload both",
            t(**ds, zero_stage=3, precision="bf16", offload_optimizer=True, offload_params=True),
        ),
        cnn("cnn ZeRO auto-stage auto-precision", t(**ds)),
        *(
            cnn(
                f"cnn ddp {precision}, 1 full epoch + validation",
                {**t(precision=precision), "max_steps": None, "checkpoint_every_steps": 10**6},
                evaluate=True,
                timeout_s=400,
            )
            for precision in ("bf16", "fp32")
        ),
        cnn(
            "cnn ddp, 2 ranks on 1 GPU (plain torchrun)",
            t(precision="bf16", max_steps=20),
            launcher="torchrun2",
            timeout_s=120,
        ),
        cnn(
            "cnn ddp, rules.train --gpus 0 --cpu-procs 2",
            t(precision="fp32", max_steps=20),
            launcher="cpu2",
            timeout_s=180,
        ),
    ]
    bert = {"backbone": "hf", "path": hf_ckpt, "init": "random", "dropout": 0.1}
    ckpt = {**bert, "gradient_checkpointing": True}
    out += [
        Case("BERT 256x4 ddp fp32", "hf", bert, t(precision="fp32"), data="bpe"),
        Case("BERT 256x4 ddp bf16", "hf", bert, t(precision="bf16"), data="bpe"),
        Case(
            "BERT 256x4 ddp bf16 + checkpointing", "hf", ckpt, t(precision="bf16"), data="bpe", evaluate=True
        ),
        Case(
            "BERT 256x4 fsdp bf16 + checkpointing",
            "hf",
            ckpt,
            t(strategy="fsdp", precision="bf16"),
            data="bpe",
        ),
        Case(
            "BERT 256x4 ZeRO-3 bf16 + checkpointing",
            "hf",
            ckpt,
            t(**ds, zero_stage=3, precision="bf16"),
            data="bpe",
            evaluate=True,
        ),
    ]
    model = MEDIUM_TRANSFORMER
    out += [
        Case("transformer d512 L8 ddp fp32", "transformer", model, t(precision="fp32")),
        Case("transformer d512 L8 ddp bf16", "transformer", model, t(precision="bf16")),
        Case("transformer d512 L8 fsdp bf16", "transformer", model, t(strategy="fsdp", precision="bf16")),
        Case(
            "transformer d512 L8 ZeRO-2 bf16", "transformer", model, t(**ds, zero_stage=2, precision="bf16")
        ),
        Case(
            "transformer d512 L8 ZeRO-3 bf16", "transformer", model, t(**ds, zero_stage=3, precision="bf16")
        ),
        Case(
            "transformer d512 L8 ddp bf16 + checkpointing",
            "transformer",
            {**MEDIUM_TRANSFORMER, "gradient_checkpointing": True},
            t(precision="bf16"),
        ),
        *(
            Case(
                f"transformer d512 L8 ddp {precision}, 65,536-token batches",
                "transformer",
                MEDIUM_TRANSFORMER,
                t(precision=precision, max_steps=min(steps, 60)),
                data="nt64k",
            )
            for precision in ("fp32", "bf16")
        ),
    ]
    out += [
        Case("transformer d256 L4 ddp fp32", "transformer", SMALL_TRANSFORMER, t(precision="fp32")),
        Case("transformer d256 L4 ddp bf16", "transformer", SMALL_TRANSFORMER, t(precision="bf16")),
    ]
    return out


# ---- inputs ---------------------------------------------------------------------------------
def sh(
    args: list[str], log: Path, timeout: float | None = None, env: dict | None = None
) -> tuple[int, float]:
    began = time.monotonic()
    with log.open("w") as handle:
        try:
            rc = subprocess.run(
                args,
                stdout=handle,
                stderr=subprocess.STDOUT,
                timeout=timeout,
                env={**os.environ, **(env or {})},
            ).returncode
        except subprocess.TimeoutExpired:
            rc = 124
    return rc, time.monotonic() - began


def must(args: list[str], log: Path) -> None:
    rc, seconds = sh(args, log)
    print(f"  {' '.join(args[2:4])}: rc {rc}, {seconds:.1f} s", flush=True)
    if rc:
        sys.exit(f"gpu_check: input step failed, see {log}:\n{log.read_text()[-2000:]}")


def run_rule(rule: str, config: dict, log: Path, *paths: str | Path) -> None:
    """`python -m workflow_scripts.rules.<rule>` with the path flags (`--flag`, path, ...) and
    the config; exits on failure."""
    must([PY, "-m", f"workflow_scripts.rules.{rule}", *map(str, paths), "--config", json.dumps(config)], log)


def run_bucket(data: Path, name: str, config: dict, *tokenizer: str | Path) -> None:
    """Buckets data/windows.parquet into data/<name>/ (manifest.parquet, summary.json)."""
    out = data / name
    inputs = ("--windows", data / "windows.parquet", *tokenizer)
    outputs = ("--out-manifest", out / "manifest.parquet", "--out-summary", out / "summary.json")
    run_rule("bucket", config, data.parent / "logs" / f"bucket_{name}.log", *inputs, *outputs)


def prepare(work: Path, n_genes: int, need_bpe: bool) -> None:
    """demo genome → windows → buckets (nt, nt64k), and for HF cases a BPE tokenizer + BERT config."""
    data, logs = work / "data", work / "logs"
    data.mkdir(parents=True, exist_ok=True)
    logs.mkdir(exist_ok=True)
    genome_and_calls = ("--genome", data / "genome.fa.gz", "--calls", data / "calls.tsv")
    if not (data / "windows.parquet").exists():
        run_rule("demo_data", {"demo": {"n_genes": n_genes}}, logs / "demo_data.log", *genome_and_calls)
        experiment = {"name": "fp_vs_tp", "error_label": "FP", "correct_label": "TP"}
        windows = ("--out", data / "windows.parquet")
        run_rule("extract", {"experiment": experiment}, logs / "extract.log", *genome_and_calls, *windows)
    for name, budget in (("nt", 12800), ("nt64k", 65536)):
        if not (data / name / "summary.json").exists():
            run_bucket(data, name, {"bucket": {"max_tokens_per_batch": budget, "max_length": 1024}})
    if need_bpe and not (data / "bpe" / "summary.json").exists():
        bert = data / "bert"
        bpe = {"kind": "bpe", "vocab_size": 256, "max_windows": 20000}
        windows = ("--windows", data / "windows.parquet")
        run_rule("tokenizer", {"tokenizer": bpe}, logs / "tokenizer.log", *windows, "--out-dir", bert)
        import transformers

        transformers.BertConfig(vocab_size=256, **BERT).save_pretrained(str(bert))
        bucket = {"tokenizer": bpe, "bucket": {"max_tokens_per_batch": 12800, "max_length": 512}}
        run_bucket(data, "bpe", bucket, "--tokenizer-dir", bert)


# ---- one case ---------------------------------------------------------------------------------
def slug(name: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in name).strip("_")


def run_case(case: Case, work: Path, threads: int) -> dict:
    data, run = work / "data", work / "runs" / slug(case.name)
    if run.exists():
        subprocess.run(["rm", "-rf", str(run)], check=True)
    run.mkdir(parents=True)
    model = {**case.model}
    if model.get("path") == "hf-ckpt":
        model["path"] = str(data / "bert")
    bucket = data / case.data
    train = {key: value for key, value in case.train.items() if value is not None}
    paths = [
        "--windows",
        str(data / "windows.parquet"),
        "--manifest",
        str(bucket / "manifest.parquet"),
        "--bucket-summary",
        str(bucket / "summary.json"),
        "--checkpoint-dir",
        str(run / "checkpoints"),
        "--out-config",
        str(run / "model.json"),
        "--out-steps",
        str(run / "steps.jsonl"),
        "--experiment",
        "fp_vs_tp",
        "--config",
        json.dumps({"model": model, "train": train}),
    ]
    if case.launcher == "torchrun2":
        command = [
            PY,
            "-m",
            "torch.distributed.run",
            "--standalone",
            "--nproc_per_node=2",
            "--max_restarts=0",
            "-m",
            "workflow_scripts.training.worker",
            "--objective",
            "classification",
            "--out-weights",
            str(run / "model.pt"),
            *paths,
        ]
    else:
        gpus = ["--gpus", "0", "--cpu-procs", "2"] if case.launcher == "cpu2" else ["--gpus", "1"]
        command = [
            PY,
            "-m",
            "workflow_scripts.rules.train",
            *gpus,
            "--threads",
            str(threads),
            "--out-model",
            str(run / "model.pt"),
            *paths,
        ]
    rc, seconds = sh(command, run / "train.log", case.timeout_s, env={"NCCL_DEBUG": "WARN"})
    result = {"rc": rc, "wall_s": round(seconds, 1), **summarise(run, rc)}
    if case.evaluate and rc == 0:
        result.update(evaluate(data, bucket, run))
    return result


def summarise(run: Path, rc: int) -> dict:
    log = (run / "train.log").read_text(errors="replace") if (run / "train.log").exists() else ""
    out = {
        "device": grep_after(log, "device ", ","),
        "backend": grep_after(log, "backend ", "\n"),
        "strategy": grep_after(log, "strategy: ", "\n"),
    }
    if rc:
        lines = [line for line in log.splitlines() if line.strip()]
        errors = [line for line in lines if "Error" in line or "error" in line or "refus" in line.lower()]
        picked = [line for line in lines if "Duplicate GPU" in line or "errorseq:" in line] or errors
        out["error"] = " / ".join(dict.fromkeys((picked or lines or ["(no output)"])[-2:]))[:400]
        return out
    steps = [json.loads(line) for line in (run / "steps.jsonl").read_text().splitlines() if line.strip()]
    train = [r for r in steps if r["kind"] == "train"]
    timed = train[2:] or train
    out.update(
        steps=train[-1]["step"] if train else 0,
        step_ms=1000 * statistics.median(r["step_s"] for r in timed),
        windows_per_s=statistics.median(r["windows_per_s"] for r in timed),
        tokens_per_s=statistics.median(r["tokens_per_s"] for r in timed),
        gpu_peak_mb=max((r["gpu_peak_mb"] for r in train if r["gpu_peak_mb"] is not None), default=None),
        last_loss=train[-1]["loss"] if train else None,
        val=[
            {k: r[k] for k in ("val_loss", "val_accuracy", "val_roc_auc")}
            for r in steps
            if r["kind"] == "val"
        ],
    )
    out["parameters"] = grep_after(log, "fp_vs_tp: ", " parameters")
    ds_json = run / "deepspeed_config.json"
    if ds_json.exists():
        config = json.loads(ds_json.read_text())
        zero = config["zero_optimization"]
        out["deepspeed_json"] = (
            f"stage {zero['stage']}, bf16 {config['bf16']['enabled']}, "
            f"fp16 {config['fp16']['enabled']}, overlap_comm {zero['overlap_comm']}"
            + "".join(
                f", {k} {v['device']} pin {v['pin_memory']}"
                for k, v in zero.items()
                if k.startswith("offload")
            )
        )
    return out


def grep_after(text: str, marker: str, end: str) -> str | None:
    at = text.find(marker)
    if at < 0:
        return None
    rest = text[at + len(marker) :]
    return rest[: rest.find(end)] if end in rest else rest


def evaluate(data: Path, bucket: Path, run: Path) -> dict:
    command = [
        PY,
        "-m",
        "workflow_scripts.rules.evaluate",
        "--windows",
        str(data / "windows.parquet"),
        "--manifest",
        str(bucket / "manifest.parquet"),
        "--model",
        str(run / "model.pt"),
        "--model-config",
        str(run / "model.json"),
        "--config",
        '{"evaluate": {"batch_size": 256}}',
        "--experiment",
        "fp_vs_tp",
        "--out-predictions",
        str(run / "predictions.parquet"),
        "--out-metrics",
        str(run / "metrics.json"),
    ]
    rc, seconds = sh(command, run / "evaluate.log", 300)
    if rc:
        return {"evaluate": f"rc {rc}: " + (run / "evaluate.log").read_text()[-300:]}
    metrics = json.loads((run / "metrics.json").read_text())
    return {
        "evaluate": f"n {metrics['n']}, roc_auc {metrics['roc_auc']:.3f}, accuracy "
        f"{metrics['accuracy']:.3f} ({seconds:.1f} s wall)"
    }


# ---- CPUAdam JIT build -------------------------------------------------------------------------
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
        [PY, "-c", CPUADAM_SNIPPET],
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


# ---- report -------------------------------------------------------------------------------------
def row(case: Case) -> list:
    r = case.result
    if "skipped" in r:
        return [case.name, "skipped: " + r["skipped"]] + [""] * 8
    if r.get("rc"):
        return [
            case.name,
            f"FAILED rc {r['rc']} ({r.get('device')}/{r.get('backend')}): {r.get('error')}",
        ] + [""] * 8
    return [
        case.name,
        f"{r.get('device')}/{r.get('backend')}: {r.get('strategy')}",
        r.get("parameters"),
        r.get("steps"),
        f"{r['step_ms']:.1f}",
        round(r["windows_per_s"]),
        round(r["tokens_per_s"]),
        "n/a" if r.get("gpu_peak_mb") is None else f"{r['gpu_peak_mb']:,.0f}",
        f"{r['last_loss']:.3f}" if r.get("last_loss") is not None else None,
        f"{r['wall_s']:.0f}",
    ]


def report(all_cases: list[Case], extra: dict) -> None:
    header = [
        "case",
        "device/backend: strategy",
        "parameters",
        "steps",
        "step ms (median)",
        "windows/s",
        "tokens/s",
        "peak CUDA MB",
        "last loss",
        "run wall s",
    ]
    for group in dict.fromkeys(c.group for c in all_cases):
        print_table(f"gpu_check: {group}", header, [row(c) for c in all_cases if c.group == group])
    for case in all_cases:
        for key in ("deepspeed_json", "evaluate", "val"):
            if case.result.get(key):
                print(f"- {case.name}: {key}: {case.result[key]}")
    for key, value in extra.items():
        print(f"- {key}: {value}")
    sys.stdout.flush()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work-dir", default="results/gpu_check")
    parser.add_argument("--groups", default="cnn,hf,transformer,cpuadam,shapes")
    parser.add_argument("--only", help="substrings separated by |: run only cases whose name holds one")
    parser.add_argument("--steps", type=int, default=150)
    parser.add_argument("--n-genes", type=int, default=20000)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--deadline-s", type=float, default=float("inf"), help="start no case after this")
    parser.add_argument("--out", help="also write the results as JSON here (after every case)")
    args = parser.parse_args(argv)
    began = time.monotonic()
    groups = args.groups.split(",")
    work = Path(args.work_dir)
    selected = [
        c
        for c in cases(args.steps)
        if c.group in groups and (not args.only or any(s in c.name for s in args.only.split("|")))
    ]
    extra: dict = {}
    build = start_cpuadam(work) if "cpuadam" in groups else None
    print(f"gpu_check: preparing inputs in {work}", flush=True)
    prepare(work, args.n_genes, any(c.data == "bpe" for c in selected))
    if build:  # before any timed case: the compile would load the CPU
        extra["cpuadam"] = finish_cpuadam(work, *build)
        print(f"cpuadam: {extra['cpuadam']}", flush=True)

    def save() -> None:
        if args.out:
            Path(args.out).write_text(
                json.dumps({"cases": [{"name": c.name, **c.result} for c in selected], **extra}, indent=1)
            )

    for case in selected:
        if time.monotonic() - began > args.deadline_s:
            case.result = {"skipped": "deadline"}
            continue
        case.result = run_case(case, work, args.threads)
        r = case.result
        print(
            f"{case.name}: rc {r['rc']}, {r['wall_s']} s; "
            + (
                f"{r.get('step_ms', 0):.2f} ms/step, {r.get('windows_per_s', 0):,.0f} windows/s, "
                f"peak {r.get('gpu_peak_mb')} MB"
                if not r["rc"]
                else f"error: {r.get('error')}"
            ),
            flush=True,
        )
        save()
    if "shapes" in groups:
        if time.monotonic() - began > args.deadline_s:
            extra["shapes"] = "skipped: deadline"
        else:
            rc, seconds = sh([PY, "-m", "benchmarks.gpu_shapes"], work / "logs" / "shapes.log", 300)
            text = (work / "logs" / "shapes.log").read_text(errors="replace")
            print(text if rc == 0 else f"gpu_shapes: rc {rc}\n{text[-2000:]}", flush=True)
            extra["shapes"] = {"rc": rc, "wall_s": round(seconds, 1)}
        save()
    report(selected, extra)


if __name__ == "__main__":
    main()
