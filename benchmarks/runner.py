"""The one way benchmarks start errorseq: a command with its output in a log, a rule's entry point
(`python -m workflow_scripts.rules.<rule>`), a rule's entry point under a peak-memory probe, and
the workflow itself run to Snakemake targets, with the benchmark files Snakemake writes for every
job (`benchmark:` in rules/*.smk → results/benchmarks/**/*.tsv: seconds and peak RSS) read back.

A step that fails stops the benchmark with the last lines of its log.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import yaml

from workflow_scripts.command_line import path_flags

ROOT = Path(__file__).resolve().parents[1]
PYTHON = sys.executable
SNAKEMAKE = str(Path(sys.executable).parent / "snakemake")
# Runs a module as `python -m` would while it reads this process's memory (/proc/self/status,
# KiB): every `every` seconds in a thread when every > 0, and once at the end, where VmHWM (the
# kernel's high-water mark) is exact. Prints the peaks as the last line of stderr.
PEAK_MEMORY_PROBE = """
import json, runpy, sys, threading, time
module, every = sys.argv[1], float(sys.argv[2])
del sys.argv[1:3]
peak = {"VmHWM": 0, "RssAnon": 0, "RssFile": 0}
def read():
    for line in open("/proc/self/status"):
        key, _, value = line.partition(":")
        if key in peak:
            peak[key] = max(peak[key], int(value.split()[0]))
def sample():
    while True:
        read()
        time.sleep(every)
if every > 0:
    threading.Thread(target=sample, daemon=True).start()
sys.argv[0] = module.rsplit(".", 1)[-1]
try:
    runpy.run_module(module, run_name="__main__")
finally:
    read()
    print("PEAK " + json.dumps(peak), file=sys.stderr)
"""


def run_logged(
    command: list[str], log: Path, timeout: float | None = None, env: dict | None = None
) -> tuple[int, float]:
    """Run `command` with stdout and stderr to `log`: (return code, 124 on timeout; wall seconds)."""
    began = time.monotonic()
    with log.open("w") as handle:
        try:
            done = subprocess.run(
                command,
                stdout=handle,
                stderr=subprocess.STDOUT,
                timeout=timeout,
                env={**os.environ, **(env or {})},
            )
            rc = done.returncode
        except subprocess.TimeoutExpired:
            rc = 124
    return rc, time.monotonic() - began


def flags(paths: dict) -> list[str]:
    """{"--windows": path, ...} → ["--windows", "path", ...]."""
    return [str(part) for pair in paths.items() for part in pair]


def rule_command(rule: str, config: dict, inputs: dict, outputs: dict) -> list[str]:
    """A rule's program with its inputs' and outputs' path flags (as the rule derives them) and config."""
    paths = path_flags(inputs, outputs)
    return [PYTHON, "-m", f"workflow_scripts.rules.{rule}", *paths, "--config", json.dumps(config)]


def run_rule(rule: str, config: dict, log: Path, inputs: dict, outputs: dict) -> float:
    """One rule's entry point with its named inputs and outputs and config sections; wall seconds."""
    rc, seconds = run_logged(rule_command(rule, config, inputs, outputs), log)
    if rc:
        raise SystemExit(f"{rule} failed (rc {rc}), see {log}:\n{log.read_text()[-2000:]}")
    return seconds


def run_with_peak_memory(
    module: str, args: list[str], sample_every_s: float = 0.0, env: dict | None = None
) -> tuple[float, dict[str, float]]:
    """`python -m module args` in a process of its own: (wall seconds, peak VmHWM, RssAnon and
    RssFile in MiB)."""
    command = [PYTHON, "-c", PEAK_MEMORY_PROBE, module, str(sample_every_s), *args]
    began = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, **(env or {})})
    seconds = time.perf_counter() - began
    if done.returncode:
        raise RuntimeError(done.stderr)
    peak = json.loads(done.stderr.rsplit("PEAK ", 1)[1])
    return seconds, {key: kib / 1024 for key, kib in peak.items()}


def write_config(workdir: Path, config: dict, name: str = "benchmark.yaml") -> Path:
    """A --configfile for Snakemake (merged over config/config.yaml key by key)."""
    workdir.mkdir(parents=True, exist_ok=True)
    path = workdir / name
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def snakemake_command(
    workdir: Path, targets: list[str], configfile: Path, cores: int, extra: tuple[str, ...] = ()
) -> list[str]:
    return [
        SNAKEMAKE,
        *targets,
        *("--snakefile", str(ROOT / "Snakefile"), "--directory", str(workdir)),
        *("--cores", str(cores), "--configfile", str(configfile)),
        *extra,
    ]


def snakemake_env() -> dict[str, str]:
    """This interpreter first on PATH (jobs call `python`); OMP_NUM_THREADS left to Snakemake."""
    env = {**os.environ, "PATH": f"{Path(PYTHON).parent}:{os.environ.get('PATH', '')}"}
    env.pop("OMP_NUM_THREADS", None)
    return env


def snakemake(
    workdir: Path,
    targets: list[str],
    configfile: Path,
    cores: int = 2,
    show: bool = False,
    extra: tuple[str, ...] = (),
) -> float:
    """The workflow run to `targets` in `workdir`; wall seconds. `show`: print the command and
    let Snakemake's output through instead of keeping it for a failure's message; `extra`: more
    Snakemake arguments."""
    command = snakemake_command(workdir, targets, configfile, cores, extra)
    if show:
        print(" ".join(command), flush=True)
    began = time.perf_counter()
    done = subprocess.run(command, cwd=workdir, env=snakemake_env(), capture_output=not show, text=True)
    if done.returncode != 0:
        raise SystemExit(f"snakemake failed in {workdir}:\n{(done.stderr or '')[-4000:]}")
    return time.perf_counter() - began


def job_benchmarks(workdir: Path) -> pl.DataFrame:
    """One row per job of a finished run, from Snakemake's benchmark files: `job` (the file's path
    under results/benchmarks without .tsv: the rule, its shard or experiment), `s`, `cpu_s`,
    `max_rss_mb`."""
    folder = workdir / "results" / "benchmarks"
    rows = []
    for path in sorted(folder.rglob("*.tsv")):
        record = pl.read_csv(path, separator="\t").row(0, named=True)
        job = str(path.relative_to(folder).with_suffix(""))
        seconds, cpu, rss = (float(record[key]) for key in ("s", "cpu_time", "max_rss"))
        rows.append({"job": job, "s": seconds, "cpu_s": cpu, "max_rss_mb": rss})
    return pl.DataFrame(rows)
