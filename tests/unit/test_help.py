"""Every program a user runs answers `--help` (and each sub-command its own) with its usage, exit 0:
argparse formats help strings with %, so a bare % in one crashes the help alone."""

import argparse
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = sorted(
    [f"workflow_scripts.rules.{path.stem}" for path in (ROOT / "workflow_scripts/rules").glob("[!_]*.py")]
    + [
        "workflow_scripts.training.worker",
        "workflow_scripts.training.base.worker",
        "workflow_scripts.training.strategies.deepspeed_config",
        "workflow_scripts.slurm_plan",
        "workflow_scripts.sites.convert_rescorer",
        "workflow_scripts.sites.compare_runs",
        "workflow_scripts.calling.weights_fetch",
        "workflow_scripts.base_training.out_of_fold",
        "workflow_scripts.base_training.subset_eval",
        "workflow_scripts.base_training.fold_scan",
    ]
)


def sub_commands(module: str, monkeypatch) -> list[str]:
    """The sub-commands of a program's parser, found by parsing a bare command line."""
    parsers: list[argparse.ArgumentParser] = []

    def capture(self, args=None, namespace=None):
        parsers.append(self)
        raise SystemExit(0)

    with monkeypatch.context() as patched:
        patched.setattr(argparse.ArgumentParser, "parse_args", capture)
        with pytest.raises(SystemExit):
            importlib.import_module(module).main([])
    choices = [
        action.choices
        for parser in parsers
        for action in parser._actions
        if isinstance(action, argparse._SubParsersAction)
    ]
    return [name for found in choices for name in found]


@pytest.mark.parametrize("module", PROGRAMS)
def test_every_program_and_sub_command_prints_its_help(module, capsys, monkeypatch):
    main = importlib.import_module(module).main
    for command in [[], *([name] for name in sub_commands(module, monkeypatch))]:
        with pytest.raises(SystemExit) as exit_:
            main([*command, "--help"])
        assert exit_.value.code == 0, (module, command)
        assert capsys.readouterr().out.startswith("usage:"), (module, command)
