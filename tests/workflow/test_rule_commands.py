"""Every rule's command line, as `snakemake -n -p` prints it, is accepted by its program's
declaration (config/stages/), and each rule's input and output names are the declared ones: the paths the rules derive from their input and output names (workflow_scripts/workflow/
rule_params.py `path_args`, workflow_scripts/command_line.py) are the flags the programs take. Three dry runs
(calling.start annotation, the demo, calling.start regions) between them plan every program of
workflow_scripts/rules/."""

from __future__ import annotations

import importlib
import json
import shlex
import subprocess
import sys

from tests.calls_fixtures import annotation_workdir
from tests.rescore_fixtures import regions_workdir
from tests.workflow_helpers import (
    ROOT,
    merged_config,
    snakemake,
    stacked_config,
    subprocess_env,
    write_config,
)
from workflow_scripts.config.stage import GENOME_INPUTS
from workflow_scripts.config.stages import STAGES

PROGRAM = "python -m workflow_scripts.rules."
# ... plus base_data and evaluate_base (docs/base_training.md) in the calling.start annotation run
# train_base (and the base_data it reads) planned in the calling.start annotation run
TRAIN_BASE = {"train_base": {"enabled": True, "context": 80}}
PROGRAMS = {path.stem for path in (ROOT / "workflow_scripts" / "rules").glob("*.py")} - {"__init__"}


def printed_commands(dry_run_output: str) -> list[tuple[str, list[str]]]:
    """(program, its arguments) of every job's shell command, up to the first redirection."""
    commands = []
    for line in dry_run_output.splitlines():
        if PROGRAM not in line:
            continue
        words = shlex.split(line[line.index(PROGRAM) + len(PROGRAM) :])
        redirect = next(
            i for i, word in enumerate(words) if word == ">" or word[:1].isdigit() and ">" in word
        )
        commands.append((words[0], words[1:redirect]))
    return commands


def parsed_commands(workdir, *args) -> set[str]:
    """Dry-run with `args`, parse each job's arguments with its program's declaration (the
    program's STAGE), its `--config` included; the programs."""
    result = snakemake(workdir, "-n", "-p", *args)
    assert result.returncode == 0, result.stderr[-3000:]
    programs = set()
    for program, argv in printed_commands(result.stdout):
        module = importlib.import_module(f"workflow_scripts.rules.{program}")
        assert module.STAGE is STAGES[program], program
        module.STAGE.parse(argv)  # a flag the rule derives and the program lacks: SystemExit 2
        programs.add(program)
    return programs


# Snakemake's own list of each rule's input and output names, after it parsed the workflow
RULE_NAMES_SCRIPT = """
import json, sys
from pathlib import Path
from snakemake.api import SnakemakeApi
from snakemake.settings.types import ConfigSettings, OutputSettings, ResourceSettings, StorageSettings
with SnakemakeApi(OutputSettings(quiet={"all"})) as api:
    workflow = api.workflow(
        resource_settings=ResourceSettings(),
        config_settings=ConfigSettings(configfiles=[Path(path) for path in sys.argv[2:]]),
        storage_settings=StorageSettings(),
        snakefile=Path(sys.argv[1]),
        workdir=Path.cwd(),
    )._workflow
    names = {rule.name: [list(rule.input.keys()), list(rule.output.keys())] for rule in workflow.rules}
print(json.dumps(names))
"""


def rule_names(workdir, *configfiles) -> dict[str, list[list[str]]]:
    result = subprocess.run(
        [sys.executable, "-c", RULE_NAMES_SCRIPT, str(ROOT / "Snakefile"), *map(str, configfiles)],
        cwd=workdir,
        capture_output=True,
        text=True,
        env=subprocess_env(),
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.splitlines()[-1])


def base_training(workdir) -> dict:
    """base_data on, and evaluate_base with a folder of one random-weight OpenSpliceAI model."""
    import torch

    from workflow_scripts.calling.openspliceai import OpenSpliceAIModel

    folder = workdir / "base_models"
    folder.mkdir(parents=True)
    torch.save(OpenSpliceAIModel(8, 4).state_dict(), folder / "model_80nt_rs1.pt")
    return merged_config(stacked_config("base-data"), {"evaluate_base": {"models": [str(folder)]}})


def test_every_rule_names_the_inputs_and_outputs_its_stage_declares(tmp_path):
    """The `input:` and `output:` names of each rule are its declaration's (config/stages/):
    the outputs in the declared order, the inputs as a set (`--genome` stands for index and
    sequence). extract and predict_calls unpack theirs from a function: their command lines are
    checked by the test above."""
    calling = annotation_workdir(tmp_path, shards=2)
    extra = merged_config(stacked_config("tiny", "site-model"), stacked_config("pretrain-genome"))
    extra = merged_config(extra, base_training(tmp_path))
    names = rule_names(tmp_path, calling, write_config(tmp_path, "extra.yaml", extra))
    aggregates = {rule for rule, (inputs, outputs) in names.items() if not outputs}
    assert set(names) - aggregates == set(STAGES)
    for rule, stage in STAGES.items():
        inputs, outputs = names[rule]
        assert outputs == list(stage.output_names()), rule
        if rule in ("extract", "predict_calls"):
            continue
        declared = {item.name for item in stage.inputs}
        assert set(inputs) - set(GENOME_INPUTS) == declared, rule
        assert stage.genome == ({"index", "sequence"} <= set(inputs)), rule


def test_every_rule_command_line_parses_with_its_program(tmp_path):
    calling = annotation_workdir(tmp_path / "calling", shards=2)
    extra = merged_config(stacked_config("tiny", "site-model"), stacked_config("pretrain-genome"))
    extra = merged_config(extra, {"sites": {"folds": 3}})
    extra = merged_config(extra, base_training(tmp_path / "calling"))
    extra = merged_config(extra, TRAIN_BASE)
    calling_programs = parsed_commands(
        tmp_path / "calling",
        "--configfile",
        str(calling),
        str(write_config(tmp_path / "calling", "extra.yaml", extra)),
    )
    demo = tmp_path / "demo"
    demo.mkdir()
    demo_config = merged_config(
        stacked_config("tiny"),
        {"tokenizer": {"kind": "bpe", "vocab_size": 64}, "predict": {"calls": "new_calls.tsv"}},
    )
    (demo / "new_calls.tsv").write_text("chrom\tposition\tstrand\tsplice_type\n")
    demo_programs = parsed_commands(
        demo, "all", "predict", "--configfile", str(write_config(demo, "c.yaml", demo_config))
    )
    regions = tmp_path / "regions"
    regions_programs = parsed_commands(regions, "--configfile", str(regions_workdir(regions, bed=True)))
    assert calling_programs | demo_programs | regions_programs == PROGRAMS
