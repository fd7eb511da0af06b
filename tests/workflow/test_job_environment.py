"""Parsing the workflow has no side effects beyond validation (rules/common.smk): the values every
job gets (the cluster section, the one environment channel) travel on the jobs' shell line, not through the
parsing process's environment, and score_base_model's `gpu` resource is decided when a job is
planned, not when the workflow is read. Changing the cluster section reruns no job, and the
training job runs with the new value (workflow/job_environment.py)."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.workflow_helpers import ROOT, copy_of_run, planned_rules, snakemake, subprocess_env, write_config
from workflow_scripts.config.sections import complete_section
from workflow_scripts.training.cluster_env import CLUSTER_ENV_VARIABLE

# Parse the workflow with Snakemake's API in a process of its own (the shell prefix is a class
# setting of Snakemake's): what the parsing left in os.environ and the prefix's exports, then
# the gpu resource evaluated as when a job is planned, with and without an NVIDIA driver.
PARSE = """
import json, os, subprocess, sys
from pathlib import Path
from snakemake.api import SnakemakeApi
from snakemake.settings.types import ConfigSettings, OutputSettings, ResourceSettings
from snakemake.shell import shell
from workflow_scripts.workflow import preflight

workdir, configfile = map(Path, sys.argv[1:3])
before = dict(os.environ)
with SnakemakeApi(OutputSettings()) as api:
    workflow = api.workflow(
        resource_settings=ResourceSettings(cores=1),
        config_settings=ConfigSettings(configfiles=[configfile]),
        snakefile=Path(sys.argv[3]),
        workdir=workdir,
    )._workflow
    changed = sorted(k for k in set(before) | set(os.environ) if before.get(k) != os.environ.get(k))
    exported = subprocess.run(
        ["bash", "-c", shell._process_prefix + " env"], capture_output=True, text=True, check=True
    ).stdout
    gpu = workflow._rules["score_base_model"].resources["gpu"]
    planned = {}
    for device, present in (("/dev/null", 1), ("/no/such/device", 0)):
        preflight.NVIDIA_CONTROL_DEVICE = Path(device)
        planned[present] = gpu.evaluate(wildcards=None).value  # as Snakemake evaluates it per job
print(json.dumps({"changed": changed, "exported": exported, "planned": planned}))
"""


def parse_workflow(tmp_path, config: dict) -> dict:
    configfile = write_config(tmp_path, "config.yaml", config)
    done = subprocess.run(
        [sys.executable, "-c", PARSE, str(tmp_path), str(configfile), str(ROOT / "Snakefile")],
        cwd=tmp_path,
        env=subprocess_env(),
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def exported_variables(env_output: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in env_output.splitlines() if line.startswith("ERRORSEQ_"))


def test_parsing_the_workflow_leaves_the_environment_and_exports_on_the_shell_line(tmp_path):
    cluster = {"nccl_debug": "INFO", "env": {"ERRORSEQ_PROBE": "it's {braced}"}}
    parsed = parse_workflow(tmp_path, {"cluster": cluster})
    assert not [name for name in parsed["changed"] if name.startswith("ERRORSEQ_")], parsed["changed"]
    exported = exported_variables(parsed["exported"])
    assert json.loads(exported[CLUSTER_ENV_VARIABLE]) == complete_section("cluster", cluster)
    inherited = set(subprocess_env())  # what the test itself runs with (CI sets its own ERRORSEQ_*)
    assert set(exported) - inherited == {CLUSTER_ENV_VARIABLE}  # the one channel: no run facts, no config


def test_the_gpu_resource_is_decided_when_a_job_is_planned(tmp_path):
    """Evaluated after parsing: with a driver present then, 1; without, 0 (a probe while parsing
    would give the same number both times)."""
    assert parse_workflow(tmp_path, {})["planned"] == {"1": 1, "0": 0}


def test_a_cluster_change_reruns_no_job_and_the_training_job_gets_it(tiny_demo_run, tmp_path):
    workdir = copy_of_run(tiny_demo_run.workdir, tmp_path / "run")
    tiny = workdir / tiny_demo_run.config.name
    cluster = write_config(
        workdir, "cluster.yaml", {"cluster": {"nccl_debug": "INFO", "env": {"ERRORSEQ_PROBE": "two"}}}
    )
    args = ("--configfile", str(tiny), str(cluster))
    dry = snakemake(workdir, "-n", *args)
    assert dry.returncode == 0, dry.stderr[-3000:]
    # only summarize reruns: its provenance.json names the config files (one more here), and is
    # made of its declared inputs, not the config's digest
    assert planned_rules(dry.stdout) <= {"summarize", "all"}, dry.stdout[-3000:]
    rerun = snakemake(workdir, "--forcerun", "train", "--until", "train", *args)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    launch = [
        line for line in (workdir / "logs/fp_vs_tp/train.log").read_text().splitlines() if "launch:" in line
    ]
    assert launch and "ERRORSEQ_PROBE=two" in launch[0] and "NCCL_DEBUG=INFO" in launch[0], launch
