"""`snakemake -n` wall time with 1 and 10 experiments, against Snakemake's own start-up.

    python -m benchmarks.dryrun [--repeats 3]

Start-up is `snakemake -n` on a one-rule Snakefile in the same Python; the
difference is what errorseq's Snakefile, config validation and DAG add.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from benchmarks.tables import load_line, print_table

ROOT = Path(__file__).resolve().parents[1]
SNAKEMAKE = [sys.executable, "-m", "snakemake"]


def experiments(n: int) -> list[dict]:
    pairs = [("FP", "TP"), ("FN", "TN")]
    return [
        {"name": f"exp{i:02d}", "error_label": pairs[i % 2][0], "correct_label": pairs[i % 2][1]}
        for i in range(n)
    ]


def dry_run_seconds(command: list[str], cwd: Path, repeats: int) -> tuple[float, int]:
    """(best wall seconds, jobs planned) of a dry run."""
    best, jobs = float("inf"), 0
    for _ in range(repeats):
        began = time.perf_counter()
        result = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
        best = min(best, time.perf_counter() - began)
        if result.returncode:
            raise RuntimeError(result.stderr[-2000:])
        totals = [
            line.split()[-1]
            for line in (result.stdout + result.stderr).splitlines()
            if line.startswith("total")
        ]
        jobs = int(totals[-1]) if totals else 0
    return best, jobs


def startup_seconds(folder: Path, repeats: int) -> tuple[float, int]:
    """`snakemake -n` on a one-rule Snakefile: Snakemake's own start-up."""
    folder.mkdir()
    (folder / "Snakefile").write_text(
        'rule all:\n    output:\n        "x.txt",\n    shell:\n        "touch {output}"\n'
    )
    return dry_run_seconds([*SNAKEMAKE, "-n", "--cores", "1"], folder, repeats)


def errorseq_seconds(workdir: Path, n: int, repeats: int) -> tuple[float, int]:
    """`snakemake -n` of errorseq's Snakefile with n experiments."""
    workdir.mkdir()
    config = yaml.safe_load((ROOT / "config/config.yaml").read_text())
    config["experiments"] = experiments(n)
    (workdir / "config.yaml").write_text(yaml.safe_dump(config))
    command = [*SNAKEMAKE, "-n", "--cores", "1", "--snakefile", str(ROOT / "Snakefile")]
    command += ["--configfile", str(workdir / "config.yaml"), "--directory", str(workdir)]
    measured = dry_run_seconds(command, workdir, repeats)
    shutil.rmtree(workdir / ".snakemake", ignore_errors=True)
    return measured


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--experiments", default="1,10", help="experiment counts to plan, comma-separated")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        startup, jobs = startup_seconds(Path(tmp) / "trivial", args.repeats)
        rows = [["one-rule Snakefile (Snakemake start-up)", jobs, startup, 0.0]]
        for n in (int(count) for count in args.experiments.split(",")):
            seconds, jobs = errorseq_seconds(Path(tmp) / f"run{n}", n, args.repeats)
            rows.append([f"errorseq, {n} experiment{'s' if n > 1 else ''}", jobs, seconds, seconds - startup])
    print_table(
        f"snakemake -n wall time, best of {args.repeats} ({load_line()})",
        ["workflow", "jobs", "wall s", "beyond start-up s"],
        rows,
    )


if __name__ == "__main__":
    main()
