"""GPU check: every training strategy and precision on CUDA, with step time and peak memory.

    python -m benchmarks.gpu.check [--work-dir results/gpu_check] [--groups cnn,hf,transformer,cpuadam,shapes]
                                   [--only 'ddp fp32|ZeRO-3'] [--steps 150] [--deadline-s 540] [--out results.json]
    python -m benchmarks.gpu.check --list        # the cases, nothing run

The cases are data (benchmarks/gpu/cases.py). Makes the inputs once in --work-dir
(benchmarks/gpu/inputs.py: the demo's windows of --n-genes genes, buckets, a BPE tokenizer and a
BERT config for the HF cases), then runs each selected case one after another for --steps
optimizer steps (benchmarks/gpu/run.py) and prints a Markdown table per group: device/backend and
strategy, median step time, windows/s and real tokens/s after the first two records, peak CUDA
memory (`gpu_peak_mb` in steps.jsonl), last loss. A case that fails is a row with the error's last
line; the rest still run. Cases not started before --deadline-s are listed as skipped.
`benchmarks/gpu/check.sh` wraps this with an environment report.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from benchmarks.gpu.cases import GROUPS, Case, selected
from benchmarks.gpu.inputs import prepare
from benchmarks.gpu.run import finish_cpuadam, run_case, start_cpuadam
from benchmarks.runner import PYTHON, run_logged
from benchmarks.tables import print_table

HEADER = [
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


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work-dir", default="results/gpu_check")
    parser.add_argument("--groups", default=",".join([*GROUPS, "cpuadam", "shapes"]))
    parser.add_argument("--only", help="substrings separated by |: run only cases whose name holds one")
    parser.add_argument("--steps", type=int, default=150)
    parser.add_argument("--n-genes", type=int, default=20000)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--deadline-s", type=float, default=float("inf"), help="start no case after this")
    parser.add_argument("--out", help="also write the results as JSON here (after every case)")
    parser.add_argument("--list", action="store_true", help="print the selected cases and stop")
    return parser.parse_args(argv)


def row(case: Case, r: dict) -> list:
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


def report(results: dict[Case, dict], extra: dict) -> None:
    for group in dict.fromkeys(case.group for case in results):
        rows = [row(case, r) for case, r in results.items() if case.group == group]
        print_table(f"gpu_check: {group}", HEADER, rows)
    for case, result in results.items():
        for key in ("deepspeed_json", "evaluate", "val"):
            if result.get(key):
                print(f"- {case.name}: {key}: {result[key]}")
    for key, value in extra.items():
        print(f"- {key}: {value}")
    sys.stdout.flush()


def progress(case: Case, r: dict) -> str:
    if r["rc"]:
        return f"{case.name}: rc {r['rc']}, {r['wall_s']} s; error: {r.get('error')}"
    return (
        f"{case.name}: rc 0, {r['wall_s']} s; {r.get('step_ms', 0):.2f} ms/step, "
        f"{r.get('windows_per_s', 0):,.0f} windows/s, peak {r.get('gpu_peak_mb')} MB"
    )


def shapes(work: Path) -> dict:
    """benchmarks.gpu.shapes in a process of its own; its table is printed as it is."""
    log = work / "logs" / "shapes.log"
    rc, seconds = run_logged([PYTHON, "-m", "benchmarks.gpu.shapes"], log, 300)
    text = log.read_text(errors="replace")
    print(text if rc == 0 else f"gpu_shapes: rc {rc}\n{text[-2000:]}", flush=True)
    return {"rc": rc, "wall_s": round(seconds, 1)}


def save(path: str | None, results: dict[Case, dict], extra: dict) -> None:
    if path:
        cases = [{"name": case.name, **result} for case, result in results.items()]
        Path(path).write_text(json.dumps({"cases": cases, **extra}, indent=1))


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    began, groups, work = time.monotonic(), args.groups.split(","), Path(args.work_dir)
    cases = selected(groups, args.only)
    if args.list:
        print_table("gpu_check cases", ["case", "group", "data", "launcher", "GPUs"],
                    [[c.name, c.group, c.data, c.launcher, c.ngpu] for c in cases])  # fmt: skip
        return
    extra: dict = {}
    build = start_cpuadam(work) if "cpuadam" in groups else None
    print(f"gpu_check: preparing inputs in {work}", flush=True)
    prepare(work, args.n_genes, {case.data for case in cases})
    if build:  # before any timed case: the compile would load the CPU
        extra["cpuadam"] = finish_cpuadam(work, *build)
        print(f"cpuadam: {extra['cpuadam']}", flush=True)
    results: dict[Case, dict] = {case: {} for case in cases}
    for case in cases:
        if time.monotonic() - began > args.deadline_s:
            results[case] = {"skipped": "deadline"}
            continue
        results[case] = run_case(case, work, args.steps, args.threads)
        print(progress(case, results[case]), flush=True)
        save(args.out, results, extra)
    if "shapes" in groups:
        late = time.monotonic() - began > args.deadline_s
        extra["shapes"] = "skipped: deadline" if late else shapes(work)
        save(args.out, results, extra)
    report(results, extra)


if __name__ == "__main__":
    main()
