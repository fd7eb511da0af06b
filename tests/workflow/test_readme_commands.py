"""Every `snakemake` command in the README's bash blocks and in the example configs' headers runs
as written, in a copy of the checkout: local runs until their first rule (demo_data, or
index_genome for a real genome), so a command that names no cores fails here as it fails for a
user; dry runs and the SLURM profile as written with --dry-run. Commands with placeholders a test
cannot fill are listed in PLACEHOLDERS, and each must still match a command."""

from __future__ import annotations

import importlib.util
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.train_fixtures import ROOT, subprocess_env

PLACEHOLDERS = {
    "/path/to/errorseq": "a user's own run folder",
    "new_calls.tsv": "a user's own calls table",
    "other_calls.parquet": "a user's own calls table and genome",
    "models/DNABERT-2-117M": "a model downloaded from the Hugging Face hub",
    "--report": "needs a finished run (tests/long/test_summary_workflow.py builds the report)",
}
PACKAGE_PATH = re.compile(r"pkg:(\w+)/")  # workflow_scripts/config/package_paths.py


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```bash\n(.*?)```", text, re.S)
    joined = "\n".join(blocks).replace("\\\n", " ")
    return [line.strip() for line in joined.splitlines() if line.strip().startswith("snakemake")]


def config_header_commands() -> list[str]:
    commands = []
    for config in sorted((ROOT / "config").glob("*.yaml")):
        for line in config.read_text().splitlines():
            if not line.startswith("#"):
                break
            if line.lstrip("# ").startswith("snakemake"):
                commands.append(line.lstrip("# ").strip())
    return commands


def as_argv(command: str) -> list[str]:
    """The command's words up to a pipe, without its comment."""
    words = shlex.split(command, comments=True)
    return words[: words.index("|")] if "|" in words else words


ALL_COMMANDS = list(dict.fromkeys(readme_commands() + config_header_commands()))
RUNNABLE = [c for c in ALL_COMMANDS if not any(p in c for p in PLACEHOLDERS)]


def test_every_placeholder_still_names_a_command():
    assert len(RUNNABLE) >= 8
    for placeholder in PLACEHOLDERS:
        assert any(placeholder in c for c in ALL_COMMANDS), f"no command has {placeholder}: drop it"


@pytest.fixture(scope="module")
def checkout(tmp_path_factory) -> Path:
    copy = tmp_path_factory.mktemp("checkout")
    for name in ("rules", "config", "workflow_scripts", "envs", "report", "profiles"):
        shutil.copytree(ROOT / name, copy / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "Snakefile", copy / "Snakefile")
    (copy / ".venv").symlink_to(ROOT / ".venv")
    (copy / "my.yaml").write_text("train: {epochs: 1}\n")
    return copy


def runnable_form(argv: list[str]) -> list[str]:
    if {"-n", "--dry-run", "--rulegraph", "--unlock"} & set(argv):
        return argv
    if "profiles/slurm" in argv:
        return [*argv, "--dry-run"]  # submitting is tested against a real cluster in test_slurm.py
    real_genome = bool(packages_named(argv))
    return [*argv, "--until", "index_genome" if real_genome else "demo_data"]


def packages_named(argv: list[str]) -> set[str]:
    """The installed packages the command's config files read data from (`pkg:` paths)."""
    configs = [ROOT / word for word in argv if word.startswith("config/") and word.endswith(".yaml")]
    return {name for config in configs for name in PACKAGE_PATH.findall(config.read_text())}


@pytest.mark.parametrize("command", RUNNABLE)
def test_readme_command_runs_as_written(checkout, command):
    argv = runnable_form(as_argv(command))
    missing = sorted(name for name in packages_named(argv) if importlib.util.find_spec(name) is None)
    if missing:
        pytest.skip(f"the example reads data from {', '.join(missing)}: not installed (see its header)")
    env = subprocess_env()
    env["PATH"] = f"{ROOT / '.venv' / 'bin'}:{env['PATH']}"
    result = subprocess.run(argv, cwd=checkout, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"{command}\n{result.stderr[-3000:]}"


def planned_outputs(checkout: Path, argv: list[str]) -> set[Path]:
    """Absolute paths of every file the command's dry run plans, in its work directory."""
    words = [*argv, "-n"] if "-n" not in argv else argv
    env = subprocess_env()
    env["PATH"] = f"{ROOT / '.venv' / 'bin'}:{env['PATH']}"
    result = subprocess.run(words, cwd=checkout, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"{' '.join(argv)}\n{result.stderr[-3000:]}"
    work = checkout / argv[argv.index("--directory") + 1] if "--directory" in argv else checkout
    found = re.findall(r"^\s+(?:output|log|benchmark): (.+)$", result.stdout, re.M)
    return {(work / path).resolve() for line in found for path in line.split(", ")}


def test_the_demo_and_every_example_config_write_apart(checkout):
    """Run isolation: the README's demo and each example config's header command plan no output
    in common (each example names its own --directory)."""
    examples = [as_argv(c) for c in config_header_commands() if "--configfile" in c]
    missing = {
        name for argv in examples for name in packages_named(argv) if importlib.util.find_spec(name) is None
    }
    if missing:
        pytest.skip(f"the examples read data from {', '.join(sorted(missing))}: not installed")
    assert len(examples) >= 3 and all("--directory" in argv for argv in examples)
    plans = {"demo": planned_outputs(checkout, ["snakemake", "--cores", "1"])}
    plans.update({argv[argv.index("--configfile") + 1]: planned_outputs(checkout, argv) for argv in examples})
    assert all(len(outputs) > 5 for outputs in plans.values()), {k: len(v) for k, v in plans.items()}
    names = sorted(plans)
    for i, first in enumerate(names):
        for second in names[i + 1 :]:
            assert not plans[first] & plans[second], f"{first} and {second} share outputs"
