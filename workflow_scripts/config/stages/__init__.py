"""Every rule's declaration (config/stage.py): its inputs, outputs, config and options, once, in
one module per rule, `<rule>.py` (its `STAGE`), and `shared.py` (the pieces several rules share).

The program workflow_scripts/rules/<rule>.py imports its own module and parses its command line
with `STAGE.parse`; rules/common.smk builds the rule's flags (`path_args(rule)`) and `--config`
(`stage_config(rule)`) from the same declaration, looked up here by name, and
tests/workflow/test_rule_commands.py checks that each rule's `input:` and `output:` names are the
declared ones. Where a stage reads only some keys of a section, those keys are all it gets: a
change of another key does not rerun it (calling.threshold does not re-annotate), and reading
another key is an error (stage.UndeclaredConfig).

One module per rule because a rule's `code` param digests the modules its program imports
(source_digest.py): an edit of one declaration reruns that rule alone. So this package names no
rule's module: `stage(rule)` imports it by its name, and the rules are the modules found here.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator, Mapping
from pathlib import Path

from workflow_scripts.config.stage import Stage

NOT_RULES = frozenset({"shared"})  # the modules here that declare no rule
RULES = tuple(
    sorted(
        module.name
        for module in pkgutil.iter_modules([str(Path(__file__).parent)])
        if module.name not in NOT_RULES
    )
)


def stage(rule: str) -> Stage:
    """The declaration of `rule`: the `STAGE` of this package's module `<rule>.py`."""
    if rule not in RULES:
        raise KeyError(f"{rule!r} is not a rule with a declaration (config/stages/): {', '.join(RULES)}")
    declared: Stage = importlib.import_module(f"{__name__}.{rule}").STAGE
    assert declared.rule == rule, (rule, declared.rule)
    return declared


class Declarations(Mapping[str, Stage]):
    """Every rule's declaration by its name, imported when asked for."""

    def __getitem__(self, rule: str) -> Stage:
        return stage(rule)

    def __iter__(self) -> Iterator[str]:
        return iter(RULES)

    def __len__(self) -> int:
        return len(RULES)


STAGES: Mapping[str, Stage] = Declarations()
