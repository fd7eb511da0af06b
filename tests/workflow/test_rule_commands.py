"""Every rule's command line, as `snakemake -n -p` prints it, is accepted by its program's own
parser: the paths the rules derive from their input and output names (workflow_scripts/workflow/
rule_params.py `path_args`, workflow_scripts/command_line.py) are the flags the programs take. Three dry runs
(calling.start annotation, the demo, calling.start regions) between them plan every program of
workflow_scripts/rules/."""

from __future__ import annotations

import importlib
import shlex

from tests.calls_fixtures import annotation_workdir
from tests.rescore_fixtures import regions_workdir
from tests.workflow_helpers import ROOT, merged_config, snakemake, stacked_config, write_config

PROGRAM = "python -m workflow_scripts.rules."
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
    """Dry-run with `args`, parse each job's arguments with its program's parse_args; the programs."""
    result = snakemake(workdir, "-n", "-p", *args)
    assert result.returncode == 0, result.stderr[-3000:]
    programs = set()
    for program, argv in printed_commands(result.stdout):
        module = importlib.import_module(f"workflow_scripts.rules.{program}")
        module.parse_args(argv)  # a flag the rule derives and the program lacks: SystemExit 2
        programs.add(program)
    return programs


def test_every_rule_command_line_parses_with_its_program(tmp_path):
    calling = annotation_workdir(tmp_path / "calling", shards=2)
    extra = merged_config(stacked_config("tiny", "site-model"), stacked_config("pretrain-genome"))
    extra = merged_config(extra, {"sites": {"folds": 3}})
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
