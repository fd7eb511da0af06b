"""docs/architecture.md's walks of `train.lr` and `calling.base_model.weights` are the code's: every hop it names is where it says,
the Python hops are traced, in order, in one real run of the train job's launch path and of one
rank; the schema checks `train` twice on the way (workflow, job) and never in a rank."""

from __future__ import annotations

import argparse
import ast
import dataclasses
import json
import re
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from testkit.rule_commands import train_path_args
from tests.train_fixtures import make_training_inputs
from workflow_scripts.config import sections as config_sections

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"
TRACED = ("snakemake", "job", "rank")  # the processes whose hops this test runs (Snakemake's in here)
ARGV_MODULES = {  # outside workflow_scripts/rules/: the doc names them, nothing else reads argv
    "workflow_scripts/config/sections.py",
    "workflow_scripts/config/stage.py",
    "workflow_scripts/training/entry.py",
    "workflow_scripts/training/worker.py",
    "workflow_scripts/training/base/worker.py",
    "workflow_scripts/training/node_torchrun.py",
    "workflow_scripts/training/strategies/deepspeed_config.py",
    "workflow_scripts/slurm_plan.py",
    "workflow_scripts/sites/convert_rescorer.py",
    "workflow_scripts/sites/compare_runs.py",
    "workflow_scripts/calling/weights_fetch.py",
    "workflow_scripts/base_training/out_of_fold.py",
    "workflow_scripts/base_training/subset_eval.py",
    "workflow_scripts/base_training/fold_scan.py",
}


TRAIN_LR = "## One key's path: `train.lr`"
WEIGHTS = "## The second key's path: `calling.base_model.weights`"


def hops(title: str = TRAIN_LR) -> list[dict]:
    """The rows of the walk under `title`, up to the next section."""
    text = DOC.read_text()
    section = text[text.index(title) :]
    section = section[: section.find("\n## ", len(title)) % (len(section) + 1)]
    rows = []
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[0].isdigit():
            rows.append(
                {
                    "hop": int(cells[0]),
                    "process": cells[1],
                    "file": cells[2].strip("`"),
                    "name": cells[3].strip("`"),
                }
            )
    return rows


MAX_HOP_FILES = 6  # issue 40: train.lr reaches the optimizer through at most 6 files
MAX_HAND_OFFS = 2  # Snakemake → job (--config), job → ranks (the launch file)
READS_LR = re.compile(r"\.lr\b|scaled_lr|\[\s*['\"]lr['\"]\s*\]|\blr\s*=")  # reads or sets the value


def test_every_hop_names_a_file_that_holds_its_name():
    rows = hops()
    assert [row["hop"] for row in rows] == list(range(1, len(rows) + 1)) and len(rows) > 5
    for row in rows:
        path = ROOT / row["file"]
        assert path.is_file(), row
        assert re.search(rf"\b{re.escape(row['name'])}\b", path.read_text()), row


MAX_WALK_FILES = 8  # issue 47: each documented key reaches its use through at most 8 files


@pytest.mark.parametrize("title", [TRAIN_LR, WEIGHTS])
def test_each_documented_walk_names_real_hops_in_at_most_eight_files(title):
    rows = hops(title)
    assert [row["hop"] for row in rows] == list(range(1, len(rows) + 1)) and len(rows) > 5
    for row in rows:
        path = ROOT / row["file"]
        assert path.is_file(), row
        assert re.search(rf"\b{re.escape(row['name'])}\b", path.read_text()), row
    assert len({row["file"] for row in rows}) <= MAX_WALK_FILES, sorted({row["file"] for row in rows})


def test_the_weights_enter_their_job_one_way():
    """calling.base_model.weights: one hand-off (the shell line's --weights), never in --config."""
    from workflow_scripts.config.sections import schema
    from workflow_scripts.config.stages import STAGES
    from workflow_scripts.config.validate import validate_config

    processes = [row["process"] for row in hops(WEIGHTS) if row["process"] != "—"]
    assert sum(1 for before, after in zip(processes, processes[1:]) if before != after) == 1
    keyed = [(rule, item.name) for rule, stage in STAGES.items() for item in stage.inputs if item.key]
    assert ("score_base_model", "weights") in keyed
    experiments = [{"name": "fp_vs_tp", "error_label": "FP", "correct_label": "TP"}]
    config = validate_config({"genome": "g.fa", "calls": "c.tsv", "experiments": experiments}, schema())
    config["calling"]["base_model"]["weights"] = "my/models"
    for stage in STAGES.values():
        if not stage.per_run:
            assert "my/models" not in stage.config_json(config), stage.rule


def test_train_lr_takes_at_most_six_files_and_two_hand_offs():
    rows = hops()
    assert len({row["file"] for row in rows}) <= MAX_HOP_FILES, sorted({row["file"] for row in rows})
    processes = [row["process"] for row in rows if row["process"] != "—"]
    hand_offs = sum(1 for before, after in zip(processes, processes[1:]) if before != after)
    assert processes[0] == "snakemake" and processes[-1] == "rank" and hand_offs <= MAX_HAND_OFFS


def pass_through_files() -> list[str]:
    text = DOC.read_text()
    paragraph = text[text.index("Pass-through files") :].split("\n\n")[0]
    return re.findall(r"`([\w/.]+\.(?:py|smk))`", paragraph)


def test_the_pass_through_files_never_look_at_train_lr():
    """What makes them not hops: a file that starts reading the value is a hop, and the table
    must say so (the schema's own `lr:` fields, in config/types.py, are declarations)."""
    files = pass_through_files()
    hop_files = {row["file"] for row in hops()}
    assert len(files) > 5 and not hop_files & set(files)
    for file in files:
        text = (ROOT / file).read_text()
        assert not READS_LR.search(text), f"{file} reads train.lr: {READS_LR.search(text)}"


def test_only_the_programs_the_doc_names_read_argv():
    text = DOC.read_text()
    readers = {
        str(path.relative_to(ROOT))
        for path in (ROOT / "workflow_scripts").rglob("*.py")
        if "rules" not in path.relative_to(ROOT / "workflow_scripts").parts[:1]
        and re.search(r"^import argparse|sys\.argv", path.read_text(), re.M)
    }
    assert readers == ARGV_MODULES
    named = text[text.index("Programs and their argument parsers") :]
    for module in ARGV_MODULES:
        assert module.removeprefix("workflow_scripts/") in named, module


class Launched(BaseException):
    """Where the test stops a process (not an Exception: the worker would wait for torchrun)."""


def carried_form(value, sentinel: float, depth: int = 0) -> str | None:
    """The form in which `value` carries `sentinel` (train.lr): the float itself, a JSON text, or
    a dict, list, dataclass or errorseq object holding one of those; None when it does not."""
    if depth > 6 or value is None or isinstance(value, (bool, int, bytes, type)):
        return None
    if isinstance(value, float):
        return "float" if value == sentinel else None
    if isinstance(value, str):
        return "JSON text" if repr(sentinel) in value else None
    inner: list
    if isinstance(value, dict):
        inner = list(value.values())
    elif isinstance(value, (list, tuple)):
        inner = list(value)
    elif dataclasses.is_dataclass(value):
        inner = [getattr(value, field.name, None) for field in dataclasses.fields(value)]
    elif type(value).__module__.startswith("workflow_scripts") or isinstance(value, argparse.Namespace):
        inner = list(getattr(value, "__dict__", {}).values())
    else:
        return None
    for item in inner:
        if (form := carried_form(item, sentinel, depth + 1)) is not None:
            return type(value).__name__ if form == "float" else f"{type(value).__name__} of {form}"
    return None


def traced_calls(
    action,
    last: tuple[str, str] | None = None,
    road: dict[str, set[str]] | None = None,
    sentinel: float = 0.0,
) -> list[tuple[str, str]]:
    """(file relative to the checkout, function) of each Python call `action` makes, in order,
    up to the call `last` (the rest runs untraced). `road`: each workflow_scripts file a call of
    which takes an argument carrying `sentinel`, with the forms it takes there."""
    calls = []

    def profile(frame, event, arg):
        if event == "call":
            calls.append((frame.f_code.co_filename, frame.f_code.co_name))
            if last and frame.f_code.co_name == last[1] and frame.f_code.co_filename == str(ROOT / last[0]):
                sys.setprofile(None)
        # a function that held the value as it returned (its arguments, its locals, what it returns)
        if (
            event == "return"
            and road is not None
            and frame.f_code.co_filename.startswith(str(ROOT / "workflow_scripts"))
        ):
            for value in (*frame.f_locals.values(), arg):
                form = carried_form(value, sentinel)
                if form is not None:
                    road.setdefault(str(Path(frame.f_code.co_filename).relative_to(ROOT)), set()).add(form)

    sys.setprofile(profile)
    try:
        action()
    except Launched:
        pass
    finally:
        sys.setprofile(None)
    return [
        (str(Path(file).relative_to(ROOT)), name)
        for file, name in calls
        if Path(file).is_relative_to(ROOT / "workflow_scripts")
    ]


def in_order(expected: list[tuple[str, str]], calls: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The hops of `expected` that `calls` does not make in that order (empty: all of them)."""
    position = 0
    for index, hop in enumerate(expected):
        try:
            position = calls.index(hop, position) + 1
        except ValueError:
            return expected[index:]
    return []


def train_rule_config(overrides: dict) -> str:
    """What Snakemake does with config/config.yaml and `overrides` while it parses the workflow
    (rules/common.smk: validate_config) and plans train (rules/train.smk: stage_config)."""
    import yaml

    from workflow_scripts.config.runs import runs_of_config
    from workflow_scripts.config.validate import validate_config
    from workflow_scripts.workflow.rule_params import stage_config

    user = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    config = validate_config({**user, **overrides}, config_sections.schema())
    runs = runs_of_config(config)
    name = next(iter(runs))  # the first experiment's run
    return stage_config(config, runs, "train")(SimpleNamespace(experiment=name))


def test_train_lr_takes_the_documented_hops_and_is_checked_once_before_launch(tmp_path, monkeypatch):
    from workflow_scripts.rules import train
    from workflow_scripts.training import launch, worker
    from workflow_scripts.training.loop import Trainer

    checks = []
    validate = config_sections.validate_section

    def counted(values, schema, prefix=""):
        checks.append(prefix)
        return validate(values, schema, prefix)

    monkeypatch.setattr(config_sections, "validate_section", counted)
    torchrun = []

    def no_torchrun(argv):
        torchrun.append(argv)
        raise Launched

    monkeypatch.setattr(launch, "run_torchrun", no_torchrun)
    monkeypatch.setattr(worker.StopRequest, "install", lambda: None)
    peak_lr = []

    def no_training(trainer):
        peak_lr.append(trainer.engine.optimizer.param_groups[0]["initial_lr"])
        raise Launched

    monkeypatch.setattr(Trainer, "train", no_training)
    inputs = make_training_inputs(tmp_path, n=40)
    out = tmp_path / "out"
    config = {
        "model": {"arch": "cnn", "d_model": 8, "n_layers": 1},
        "train": {"lr": 0.0123, "precision": "fp32"},
    }
    argv = ["--config", json.dumps(config), *train_path_args(inputs, out, "experiment")]
    argv += ["--gpus", "0", "--cpu-procs", "2", "--threads", "1"]

    rows = [row for row in hops() if row["process"] in TRACED]
    rule_config, road = [], {}
    workflow_calls = traced_calls(
        lambda: rule_config.append(train_rule_config({"train": {"lr": 0.0123}})), road=road, sentinel=0.0123
    )
    assert json.loads(rule_config[0])["train"]["lr"] == 0.0123  # what train's --config carries
    checks.clear()  # the workflow checks the whole config (validate_config, traced as a hop)
    job_calls = traced_calls(lambda: train.main(argv), road=road, sentinel=0.0123)
    assert checks.count("train") == 1, checks  # the job: once, when --config is read
    (rank_argv,) = [command[command.index(launch.WORKER_MODULE) + 1 :] for command in torchrun]
    assert rank_argv == ["--launch-file", str(out / "launch.json")]
    checks.clear()
    expected = {
        process: [(row["file"], row["name"]) for row in rows if row["process"] == process]
        for process in TRACED
    }
    rank_calls = traced_calls(lambda: worker.main(rank_argv), road=road, sentinel=0.0123)
    assert "train" not in checks, checks  # a rank: never (models.builtin still completes `model`)
    for process, calls in (("snakemake", workflow_calls), ("job", job_calls), ("rank", rank_calls)):
        missed = in_order(expected[process], calls)
        assert not missed, f"{process}: not reached in this order: {missed}"
    assert peak_lr == [pytest.approx(0.0123)]
    # the whole road: every Python file a call of which takes the value, in any form, is listed
    # in the doc; with the schema and the two .smk files it is the honest count
    listed = road_files()
    assert set(road) == {file for file in listed if file.endswith(".py")}, (
        f"on the road, not listed: {sorted(set(road) - set(listed))}; "
        f"listed, not on it: {sorted({f for f in listed if f.endswith('.py')} - set(road))}"
    )
    assert len(listed) <= MAX_ROAD_FILES, len(listed)


ROAD = "The whole road of `train.lr`"
MAX_ROAD_FILES = 21  # measured (issue 47): 18 Python files, the schema and two .smk; aim: 8


def road_files() -> list[str]:
    """The files the doc's paragraph on the whole road of `train.lr` lists."""
    text = DOC.read_text()
    paragraph = text[text.index(ROAD) :].split("\n\n")[0]
    return re.findall(r"`((?:workflow_scripts|rules|config)/[\w/.]+\.(?:py|smk|yaml))`", paragraph)


# The package's floors, lowest first: a module imports from its own floor or below, never above
# ("top-level" is workflow_scripts/*.py; rescorers/ holds shipped data and its reader).
FLOORS = (
    ("top-level", "rescorers"),
    ("config",),
    ("data",),
    ("calling",),
    ("base_training",),
    ("models",),
    ("tokenization",),
    ("bucketing",),
    ("training",),
    ("evaluation",),
    ("inference",),
    ("sites",),
    ("rules",),
    ("workflow",),
)
# the upward imports still there (issue 40 item 4): (from folder, to folder) -> importing modules.
# Remove an entry when its import goes; never add one.
KNOWN_UPWARD: dict[tuple[str, str], set[str]] = {}


def package_folder(module: str) -> str | None:
    """The floor name of a workflow_scripts module (dotted), None outside the package."""
    parts = module.split(".")
    if parts[0] != "workflow_scripts" or len(parts) < 2:
        return None
    return parts[1] if (ROOT / "workflow_scripts" / parts[1]).is_dir() else "top-level"


def imported_modules(path: Path) -> list[str]:
    """Every workflow_scripts module `path` imports, at its top or inside a function."""
    modules = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "workflow_scripts":
                modules += [f"workflow_scripts.{alias.name}" for alias in node.names]
            else:
                modules.append(node.module)
        elif isinstance(node, ast.Import):
            modules += [alias.name for alias in node.names]
    return modules


def upward_imports() -> dict[tuple[str, str], set[str]]:
    """(from folder, to folder) -> the modules (relative to workflow_scripts/) that import up."""
    floor = {name: level for level, names in enumerate(FLOORS) for name in names}
    found: dict[tuple[str, str], set[str]] = {}
    for path in sorted((ROOT / "workflow_scripts").rglob("*.py")):
        relative = path.relative_to(ROOT / "workflow_scripts")
        source = package_folder("workflow_scripts." + ".".join(relative.with_suffix("").parts))
        for module in imported_modules(path):
            target = package_folder(module)
            if target is None or target == source:
                continue
            assert source in floor and target in floor, f"{relative}: put {source!r}/{target!r} on a floor"
            if floor[target] > floor[source]:
                found.setdefault((source, target), set()).add(str(relative))
    return found


def test_no_new_upward_imports_between_the_package_folders():
    found = upward_imports()
    new = {edge: modules - KNOWN_UPWARD.get(edge, set()) for edge, modules in found.items()}
    assert {edge: modules for edge, modules in new.items() if modules} == {}
    gone = {edge: modules - found.get(edge, set()) for edge, modules in KNOWN_UPWARD.items()}
    assert {edge: modules for edge, modules in gone.items() if modules} == {}, "gone: drop from KNOWN_UPWARD"
