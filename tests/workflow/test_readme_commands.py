"""Every command in the README's bash blocks (and in docs/configuration.md's, where the README's
long sections moved, and in the example configs' headers) is run or checked as a user would meet it:

- `snakemake ...` runs as written in a copy of the checkout: local runs until their first rule
  (demo_data, or index_genome for a real genome), so a command that names no cores fails here as
  it fails for a user; dry runs and the SLURM profile as written with --dry-run;
- `make <target>` must be a Makefile target (`make -n`);
- `python -m <module> ...` must start: `--help` exits 0;
- `pip install ...` is not run: each `name==version` must be pinned so in a requirements file,
  each `-r` file must exist;
- `. <file>` / `source <file>` must name a file the set-up makes.

A command of any other kind fails the test until a check for it is added here. Commands with
placeholders a test cannot fill are listed in PLACEHOLDERS, and each must still match a command.
A command whose data is not here skips, saying what is missing (CI installs the data packages and
fails instead: tests/spliceai_fixtures.missing_data_package)."""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.spliceai_fixtures import missing_data_package, openspliceai_models
from tests.train_fixtures import ROOT, subprocess_env
from workflow_scripts import rescorers

DOCUMENTS = ("README.md", "docs/configuration.md")
REQUIREMENTS = ("requirements.txt", "requirements-data.txt", "requirements-hf.txt")
PLACEHOLDERS = {
    "/path/to/errorseq": "a user's own run folder",
    "new_calls.tsv": "a user's own calls table",
    "other_calls.parquet": "a user's own calls table and genome",
    "--report": "needs a finished run (tests/long/test_summary_workflow.py builds the report)",
}
PACKAGE_PATH = re.compile(r"pkg:(\w+)/")  # workflow_scripts/config/package_paths.py
# config/base_models/*.yaml; config/new_genome.yaml reads what `make weights` puts in the checkout
OPENSPLICEAI_PATH = re.compile(r"(?:shared/data|weights)/openspliceai/(\w+)")


def document_commands(text: str) -> list[str]:
    """The commands of a Markdown text's bash and sh blocks, continuation lines joined, comments
    and blank lines left out."""
    blocks = re.findall(r"```(?:bash|sh)\n(.*?)```", text, re.S)
    joined = "\n".join(blocks).replace("\\\n", " ")
    lines = (line.strip() for line in joined.splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def readme_commands() -> list[str]:
    return [c for name in DOCUMENTS for c in document_commands((ROOT / name).read_text())]


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


def kind_of(command: str) -> str:
    """What a command is, by its first words: snakemake, make, python -m, pip install, activate."""
    words = as_argv(command)
    program = Path(words[0]).name if words else ""
    if program == "snakemake":
        return "snakemake"
    if program == "make":
        return "make"
    if re.fullmatch(r"python3?(\.\d+)?", program) and words[1:2] == ["-m"]:
        return "pip" if words[2:4] == ["pip", "install"] else "python -m"
    if program in {"pip", "pip3"} and words[1:2] == ["install"]:
        return "pip"
    if words[0] in {".", "source"}:
        return "activate"
    return "unknown"


ALL_COMMANDS = list(dict.fromkeys(readme_commands() + config_header_commands()))
SNAKEMAKE = [c for c in ALL_COMMANDS if kind_of(c) == "snakemake"]
RUNNABLE = [c for c in SNAKEMAKE if not any(p in c for p in PLACEHOLDERS)]


def test_the_readme_has_its_commands_and_each_kind_is_checked():
    readme = document_commands((ROOT / "README.md").read_text())
    assert {"make demo", "make test"} <= {" ".join(as_argv(c)) for c in readme}
    configs = [config for c in readme for config in configs_named(as_argv(c)) if config.is_file()]
    assert any("start: regions" in config.read_text() for config in configs), "no new-genome command"
    unknown = [c for c in ALL_COMMANDS if kind_of(c) == "unknown"]
    assert not unknown, f"commands no check here covers (add one): {unknown}"


def test_the_readme_stays_short_with_short_table_cells():
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) < 200, f"README.md has {len(lines)} lines: move detail into docs/"
    cells = [cell.strip() for line in lines if line.startswith("|") for cell in line.strip("|").split(" | ")]
    assert max(map(len, cells)) <= 200, max(cells, key=len)


def test_every_placeholder_still_names_a_command():
    assert len(RUNNABLE) >= 8
    for placeholder in PLACEHOLDERS:
        assert any(placeholder in c for c in ALL_COMMANDS), f"no command has {placeholder}: drop it"


@pytest.mark.parametrize("command", [c for c in ALL_COMMANDS if kind_of(c) == "make"])
def test_make_command_is_a_makefile_target(command):
    argv = as_argv(command)
    makefile = (ROOT / "Makefile").read_text()
    targets = [word for word in argv[1:] if "=" not in word]  # NAME=value sets a make variable
    for target in targets:  # a file or folder of that name would satisfy `make -n` too (tests/)
        assert re.search(rf"^{re.escape(target)}:", makefile, re.M), (
            f"{command}: no target {target} in the Makefile"
        )
    result = subprocess.run(
        [*argv[:1], "-n", *argv[1:]], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, f"{command}: {result.stderr.strip()}"


@pytest.mark.parametrize("command", [c for c in ALL_COMMANDS if kind_of(c) == "python -m"])
def test_python_module_command_starts(command):
    module = as_argv(command)[2]
    result = subprocess.run(
        [sys.executable, "-m", module, "--help"],
        cwd=ROOT,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, f"{command}: python -m {module} --help\n{result.stderr[-2000:]}"


def pinned_requirements() -> dict[str, str]:
    """Every `name==version` of the requirements files, by lower-case name."""
    pins = {}
    for name in REQUIREMENTS:
        for line in (ROOT / name).read_text().splitlines():
            spec = line.split("#", 1)[0].strip()
            if "==" in spec:
                package, version = spec.split("==", 1)
                pins[package.strip().lower()] = version.strip()
    return pins


@pytest.mark.parametrize("command", [c for c in ALL_COMMANDS if kind_of(c) == "pip"])
def test_pip_install_command_matches_the_requirements(command):
    words = as_argv(command)
    arguments = words[words.index("install") + 1 :]
    pins = pinned_requirements()
    for i, word in enumerate(arguments):
        if word in {"-r", "--requirement"}:
            assert (ROOT / arguments[i + 1]).is_file(), f"{command}: no file {arguments[i + 1]}"
        elif "==" in word:
            package, version = word.split("==", 1)
            assert pins.get(package.lower()) == version, (
                f"{command}: {word} is not what {', '.join(REQUIREMENTS)} pin ({package}=={pins.get(package.lower())})"
            )


@pytest.mark.parametrize("command", [c for c in ALL_COMMANDS if kind_of(c) == "activate"])
def test_activate_command_names_a_file_the_set_up_makes(command):
    path = as_argv(command)[1]
    if path.startswith(".venv/") and not (ROOT / ".venv").is_dir():
        pytest.skip("no .venv here (make setup makes it)")
    assert (ROOT / path).is_file(), f"{command}: no file {path}"


@pytest.fixture(scope="module")
def checkout(tmp_path_factory) -> Path:
    """A copy of the checkout, with ../shared/data/openspliceai beside it where this one has the
    models (the example configs' weights paths are relative to that)."""
    copy = tmp_path_factory.mktemp("work") / "main"
    for name in ("rules", "config", "workflow_scripts", "envs", "report", "profiles"):
        shutil.copytree(ROOT / name, copy / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "Snakefile", copy / "Snakefile")
    (copy / ".venv").symlink_to(ROOT / ".venv")
    (copy / "my.yaml").write_text("train: {epochs: 1}\n")
    models = Path(os.environ.get("ERRORSEQ_OPENSPLICEAI", ROOT.parent / "shared/data/openspliceai")).resolve()
    if models.is_dir():
        (copy.parent / "shared" / "data").mkdir(parents=True)
        (copy.parent / "shared" / "data" / "openspliceai").symlink_to(models)
    try:  # what `make weights` leaves in the checkout (weights/openspliceai/<species>/)
        species = openspliceai_models("arabidopsis")
    except pytest.skip.Exception:
        return copy
    (copy / "weights").mkdir()
    (copy / "weights" / "openspliceai").symlink_to(species.parent)
    return copy


def runnable_form(argv: list[str]) -> list[str]:
    if {"-n", "--dry-run", "--rulegraph", "--unlock"} & set(argv):
        return argv
    if "profiles/slurm" in argv:
        return [*argv, "--dry-run"]  # submitting is tested against a real cluster in test_slurm.py
    real_genome = bool(packages_named(argv))
    return [*argv, "--until", "index_genome" if real_genome else "demo_data"]


def configs_named(argv: list[str]) -> list[Path]:
    return [ROOT / word for word in argv if word.startswith("config/") and word.endswith(".yaml")]


def packages_named(argv: list[str]) -> set[str]:
    """The installed packages the command's config files read data from (`pkg:` paths)."""
    return {name for config in configs_named(argv) for name in PACKAGE_PATH.findall(config.read_text())}


def require_data_packages(argv: list[str]) -> None:
    """Skip (or fail, in CI) a command whose data packages are not installed."""
    for name in sorted(packages_named(argv)):
        if importlib.util.find_spec(name) is None:
            missing_data_package(name)


def not_here(argv: list[str]) -> str | None:
    """Why a command cannot run here though its packages are installed: its OpenSpliceAI models are
    not beside the checkout, or the re-scorer it names is not shipped yet; None when it can."""
    for config in configs_named(argv):
        text = config.read_text()
        for species in OPENSPLICEAI_PATH.findall(text):
            try:
                openspliceai_models(species)
            except pytest.skip.Exception as skipped:
                return str(skipped)
        transfer = str(((yaml.safe_load(text) or {}).get("sites") or {}).get("transfer", ""))
        if (
            transfer.startswith(rescorers.PREFIX)
            and transfer[len(rescorers.PREFIX) :] not in rescorers.available()
        ):
            return f"{config.name}: sites.transfer {transfer} is not in workflow_scripts/rescorers/ yet"
    return None


def skip_unless_its_data_is_here(argv: list[str]) -> None:
    require_data_packages(argv)
    reason = not_here(argv)
    if reason:
        pytest.skip(reason)


@pytest.mark.parametrize("command", RUNNABLE)
def test_readme_command_runs_as_written(checkout, command):
    argv = runnable_form(as_argv(command))
    skip_unless_its_data_is_here(argv)
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
    assert len(examples) >= 3 and all("--directory" in argv for argv in examples)
    for argv in examples:
        require_data_packages(argv)
    examples = [argv for argv in examples if not_here(argv) is None]
    plans = {"demo": planned_outputs(checkout, ["snakemake", "--cores", "1"])}
    plans.update({argv[argv.index("--configfile") + 1]: planned_outputs(checkout, argv) for argv in examples})
    assert all(len(outputs) > 5 for outputs in plans.values()), {k: len(v) for k, v in plans.items()}
    names = sorted(plans)
    for i, first in enumerate(names):
        for second in names[i + 1 :]:
            assert not plans[first] & plans[second], f"{first} and {second} share outputs"
