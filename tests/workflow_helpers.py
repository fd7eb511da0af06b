"""Run the real Snakemake workflow on a tiny demo in a temporary working directory."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
TEST_CONFIGS = ROOT / ".test"  # the tests' config files, also runnable by hand (.test/README.md)
# How long a test waits for a process or a file before it calls it a hang: a guard, never a bound on
# speed (a short one failed tests on a loaded 2-core machine; timings belong in benchmarks/).
HANG_GUARD_S = 600


def merged_config(base: dict, override: dict) -> dict:
    """`override` over `base` as Snakemake merges --configfile files: mappings key by key, any
    other value (lists included) replaced whole."""
    merged = dict(base)
    for key, value in override.items():
        both_mappings = isinstance(value, dict) and isinstance(merged.get(key), dict)
        merged[key] = merged_config(merged[key], value) if both_mappings else value
    return merged


def stacked_config(*names: str) -> dict:
    """.test/config-<name>.yaml files merged in order, as `--configfile` would merge them."""
    config: dict = {}
    for name in names:
        config = merged_config(config, yaml.safe_load((TEST_CONFIGS / f"config-{name}.yaml").read_text()))
    return config


TINY_CONFIG = stacked_config("tiny")


def subprocess_env(**extra: str) -> dict[str, str]:
    """The environment of every Snakemake or torchrun the tests start.

    This interpreter's bin goes first on PATH (Snakemake's shell jobs call `python`), and the
    pytest process's OMP_NUM_THREADS is not passed on: Snakemake sets it per job from `threads`.
    """
    env = {**os.environ, **extra}
    env["PATH"] = f"{Path(sys.executable).parent}:{env.get('PATH', '')}"  # also over an extra PATH
    if "OMP_NUM_THREADS" not in extra:
        env.pop("OMP_NUM_THREADS", None)
    return env


def write_config(directory: Path, name: str, values: dict) -> Path:
    path = directory / name
    path.write_text(yaml.safe_dump(values))
    return path


def copy_of_run(workdir: Path, destination: Path) -> Path:
    """A finished run's folder copied with its modification times and Snakemake's metadata: in
    the copy, Snakemake too finds nothing to do."""
    return Path(shutil.copytree(workdir, destination, symlinks=True))


def snakemake_command(
    workdir: Path, *args: str, cores: int | None = 2, snakefile: Path = ROOT / "Snakefile"
) -> list[str]:
    """The one way the tests start Snakemake: the repository's Snakefile (or a copy's) run in `workdir`."""
    command = [
        str(Path(sys.executable).parent / "snakemake"),
        "--snakefile",
        str(snakefile),
        "--directory",
        str(workdir),
    ]
    if cores is not None:
        command += ["--cores", str(cores)]
    return command + list(args)


def snakemake(
    workdir: Path,
    *args: str,
    timeout: int = 600,
    env: dict[str, str] | None = None,
    cores: int | None = 2,
    snakefile: Path = ROOT / "Snakefile",
    output: Path | None = None,
) -> subprocess.CompletedProcess:
    """Run Snakemake to the end and capture its output; with `output`, into that file as a shell's
    `> output 2>&1` would (not in append mode), and the result's stdout is the file's text."""
    command = snakemake_command(workdir, *args, cores=cores, snakefile=snakefile)
    if output is None:
        return subprocess.run(
            command, cwd=workdir, env=env or subprocess_env(), capture_output=True, text=True, timeout=timeout
        )
    with output.open("w") as sink:
        done = subprocess.run(
            command,
            cwd=workdir,
            env=env or subprocess_env(),
            stdout=sink,
            stderr=subprocess.STDOUT,
            timeout=timeout,
        )
    return subprocess.CompletedProcess(done.args, done.returncode, output.read_text(), "")


def start_snakemake(
    workdir: Path, *args: str, output: Path, env: dict[str, str] | None = None, cores: int | None = 2
) -> subprocess.Popen:
    """Start Snakemake in a session of its own (so a test can kill it and its jobs), output to a file."""
    with output.open("w") as sink:
        return subprocess.Popen(
            snakemake_command(workdir, *args, cores=cores),
            cwd=workdir,
            env=env or subprocess_env(),
            start_new_session=True,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )


def start_in_session(command: list[str], **kwargs) -> subprocess.Popen:
    """Start a command from the checkout in a session of its own (a test can signal it and its
    children), its output as text on a pipe."""
    return subprocess.Popen(
        command,
        cwd=ROOT,
        env=subprocess_env(),
        start_new_session=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        **kwargs,
    )


def planned_rules(dry_run_output: str) -> set[str]:
    """Rule names from the job-stats table of `snakemake -n`."""
    rules, in_table = set(), False
    for line in dry_run_output.splitlines():
        if line.startswith("job ") and "count" in line:
            in_table = True
            continue
        if in_table:
            parts = line.split()
            if not parts or parts[0] == "total":
                break
            if not set(parts[0]) <= {"-"}:
                rules.add(parts[0])
    return rules


def rulegraph_edges(dot: str) -> set[tuple[str, str]]:
    """(rule, rule it feeds) of `snakemake --rulegraph`'s dot text."""
    labels = dict(re.findall(r'^\s*(\d+)\[label = "([^"]+)"', dot, re.M))
    return {(labels[a], labels[b]) for a, b in re.findall(r"^\s*(\d+) -> (\d+)", dot, re.M)}
