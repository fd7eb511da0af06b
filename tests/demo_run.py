"""The tiny demo run that several test modules read (tests/workflow/conftest.py: the session fixture
`tiny_demo_run`): the whole pipeline, once, the way a careless user and a hostile input would
have it. The working folder and the input files are named like shell code, the config file's
name has a space, and every Python process of the run (Snakemake, jobs, torchrun, ranks) loads
a guard that refuses and records connections off this machine.

test_workflow.py and test_explain.py read the results; test_safety.py checks that none of the
names ran, that nothing was written outside results/ and logs/ and that no connection left the
machine.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

from tests.workflow_helpers import ROOT, snakemake, subprocess_env
from workflow_scripts.command_line import path_flags

WEIRD_DIR = "a b;$(touch pwned)'x"
WEIRD_GENOME = "g e;`touch pwned`$HOME.fa.gz"
WEIRD_CALLS = "c a'll;$(touch pwned) s.tsv"
CONFIG_NAME = "my config.yaml"
NETGUARD = '''
"""Test-only: refuse (and record) any connection that leaves this machine."""
import os, socket

_LOG = os.environ["ERRORSEQ_NETGUARD_LOG"]
_LOCAL = ("127.", "::1", "localhost", "0.0.0.0")


def _record(line):
    with open(_LOG, "a") as handle:
        handle.write(line + "\\n")


def _guard(original):
    def connect(self, address, *args):
        if self.family != socket.AF_UNIX and not str(address[0]).startswith(_LOCAL):
            _record(f"blocked {os.getpid()} {address!r}")
            raise OSError("network access blocked by the errorseq test guard")
        return original(self, address, *args)
    return connect


socket.socket.connect = _guard(socket.socket.connect)
socket.socket.connect_ex = _guard(socket.socket.connect_ex)
_record(f"loaded {os.getpid()}")
'''


@dataclass
class DemoRun:
    base: Path  # the folder that holds the working folder, the guard and its log
    workdir: Path
    config: Path
    result: subprocess.CompletedProcess
    net_log: Path
    before: set[Path]  # what `base` held before Snakemake started

    def to_json(self) -> str:
        """The run as JSON, for the other pytest-xdist workers (tests/workflow/conftest.py)."""
        result = {"args": [str(a) for a in self.result.args], "returncode": self.result.returncode}
        result |= {"stdout": self.result.stdout, "stderr": self.result.stderr}
        paths = {name: str(getattr(self, name)) for name in ("base", "workdir", "config", "net_log")}
        return json.dumps({**paths, "result": result, "before": sorted(map(str, self.before))})

    @classmethod
    def from_json(cls, text: str) -> DemoRun:
        saved = json.loads(text)
        result = subprocess.CompletedProcess(**saved["result"])
        paths = {name: Path(saved[name]) for name in ("base", "workdir", "config", "net_log")}
        return cls(**paths, result=result, before={Path(p) for p in saved["before"]})


def run_demo(base: Path, config: dict) -> DemoRun:
    """demo_data's genome and calls under shell-code names (its entry point: the rule would name
    them itself), then `snakemake` on them with `config` in a shell-code-named folder."""
    workdir = base / WEIRD_DIR
    workdir.mkdir()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "workflow_scripts.rules.demo_data",
            *path_flags({}, {"genome": workdir / WEIRD_GENOME, "calls": workdir / WEIRD_CALLS}),
            "--config",
            json.dumps({"demo": config["demo"]}),
        ],
        cwd=ROOT,
        env=subprocess_env(),
        check=True,
        capture_output=True,
    )
    config_file = workdir / CONFIG_NAME
    config_file.write_text(yaml.safe_dump({**config, "genome": WEIRD_GENOME, "calls": WEIRD_CALLS}))
    guard = base / "netguard"
    guard.mkdir()
    (guard / "sitecustomize.py").write_text(NETGUARD)
    net_log = base / "network.log"
    # The guard goes first; a PYTHONPATH already set (a checkout other than the installed one) stays.
    python_path = os.pathsep.join(filter(None, (str(guard), os.environ.get("PYTHONPATH"))))
    env = subprocess_env(PYTHONPATH=python_path, ERRORSEQ_NETGUARD_LOG=str(net_log))
    before = set(base.iterdir())
    result = snakemake(workdir, "--configfile", str(config_file), env=env)
    return DemoRun(base, workdir, config_file, result, net_log, before)
