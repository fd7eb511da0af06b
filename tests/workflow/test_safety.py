"""Safety: nothing read is executed, config values reach the shell only quoted, no network at run
time, and nothing is written outside results/ and logs/ of the working directory."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import yaml

from testkit.rule_commands import evaluate_args
from tests.demo_run import CONFIG_NAME, WEIRD_CALLS, WEIRD_GENOME
from tests.train_fixtures import ROOT, make_training_inputs, subprocess_env
from tests.workflow_helpers import HANG_GUARD_S


@pytest.fixture(scope="module")
def weird_run(tiny_demo_run):
    """The whole pipeline in a folder, and on inputs, whose names are shell code, under the
    network guard: the demo run that test_workflow.py and test_explain.py read too (conftest.py,
    tests/demo_run.py)."""
    return tiny_demo_run


def test_the_pipeline_runs_in_a_folder_named_like_shell_code_and_runs_none_of_it(weird_run):
    result, workdir = weird_run.result, weird_run.workdir
    logs = (
        "".join(p.read_text() for p in (workdir / "logs").rglob("*.log"))
        if (workdir / "logs").exists()
        else ""
    )
    assert result.returncode == 0, result.stderr[-3000:] + logs[-3000:]
    assert (workdir / "results/fp_vs_tp/evaluation/metrics.json").exists()
    planted = [p for folder in (weird_run.base, ROOT, Path.cwd()) for p in folder.rglob("pwned*")]
    assert not planted, planted


def test_nothing_is_written_outside_results_and_logs(weird_run):
    workdir = weird_run.workdir
    assert weird_run.result.returncode == 0
    top = sorted(p.name for p in workdir.iterdir())
    assert top == sorted([".snakemake", "logs", "results", CONFIG_NAME, WEIRD_GENOME, WEIRD_CALLS]), top
    new_beside = set(weird_run.base.iterdir()) - weird_run.before - {weird_run.net_log}
    assert not new_beside, new_beside


def test_no_network_access_at_run_time(weird_run):
    """Every Python process of the run (Snakemake, jobs, torchrun, ranks) loads a guard that
    refuses connections off this machine; none was attempted."""
    assert weird_run.result.returncode == 0
    lines = weird_run.net_log.read_text().splitlines()
    assert len([line for line in lines if line.startswith("loaded")]) >= 6  # the guard was active
    assert not [line for line in lines if line.startswith("blocked")]


# ---- static checks ----------------------------------------------------------------------------
# Unquoted params must be numbers or text the workflow quoted itself (shlex.quote in workflow_scripts/workflow/).
UNQUOTED_PARAMS_OK = {
    "errorseq",
    "genome",
    "paths",
}  # options built with shlex_quote'd paths (path_args: shlex.join)


def test_config_values_reach_shell_commands_only_quoted():
    for rules in sorted((ROOT / "rules").glob("*.smk")):
        text = rules.read_text()
        for match in re.finditer(r"\{(input|output|log|params)(\.(\w+))?(:q)?\}", text):
            kind, name, quoted = match.group(1), match.group(3), match.group(4)
            if kind == "params" and name in UNQUOTED_PARAMS_OK:
                continue
            assert quoted, (
                f"{rules.name}: {match.group(0)} reaches the shell unquoted: write it as "
                "{...:q}, or build it with shlex.quote in workflow_scripts/workflow/ and list it in UNQUOTED_PARAMS_OK"
            )
    schema = yaml.safe_load((ROOT / "config/config.schema.yaml").read_text())
    name = schema["properties"]["experiments"]["items"]["properties"]["name"]
    assert (
        name["pattern"] == "^[A-Za-z0-9_][A-Za-z0-9_.-]*$"
    )  # {wildcards.experiment} is unquoted: no shell characters


def test_every_torch_load_is_weights_only():
    for path in sorted((ROOT / "workflow_scripts").rglob("*.py")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r"(?<!safetensors\.)torch\.load\(", line):  # safetensors' load reads tensors only
                assert "weights_only=True" in line, f"{path.name}:{number}: {line.strip()}"


class Payload:
    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def test_evaluate_refuses_a_model_file_that_would_run_code(tmp_path):
    inputs = make_training_inputs(tmp_path, n=40)
    marker = tmp_path / "executed"
    model, model_config = tmp_path / "model.pt", tmp_path / "model.json"
    torch.save({"conv.weight": torch.zeros(1), "evil": Payload(marker)}, model)
    model_config.write_text(
        '{"model": {"arch": "cnn", "d_model": 8, "n_layers": 1}, '
        '"tokenizer": {"kind": "nucleotide", "k": 1}, "max_tokens": 128}'
    )
    result = subprocess.run(
        [
            sys.executable,
            *evaluate_args(inputs, model, model_config, "x", tmp_path / "p.parquet", tmp_path / "m.json"),
        ],
        cwd=ROOT,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
    )
    assert result.returncode == 2
    errors = [line for line in result.stderr.splitlines() if line.startswith("errorseq: error:")]
    assert len(errors) == 1 and "model.pt: model: refused: it holds Python objects" in errors[0], (
        result.stderr
    )
    assert "Traceback" not in result.stderr
    assert not marker.exists() and not (tmp_path / "m.json").exists()
