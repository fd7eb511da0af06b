"""source_digest.py and the declarations (config/stages/): an edit of one rule's declaration changes
that rule's `code` digest alone, so it reruns that rule and what follows, not the whole pipeline."""

from __future__ import annotations

import pytest

from workflow_scripts import source_digest
from workflow_scripts.config.stages import RULES, STAGES

DECLARATIONS = "workflow_scripts.config.stages"
SHARED = f"{DECLARATIONS}.shared"


def every_rule_digest() -> dict[str, str]:
    source_digest.code_digest.cache_clear()
    source_digest.module_source.cache_clear()
    return {rule: source_digest.rule_code_digest(rule) for rule in RULES}


def edit_text(package, old: str, new: str) -> None:
    """Replace `old` in the one file of the package that holds it."""
    holders = [path for path in package.rglob("*.py") if old in path.read_text()]
    assert len(holders) == 1, holders
    holders[0].write_text(holders[0].read_text().replace(old, new))


def test_an_edit_of_one_declaration_changes_that_rules_code_digest_alone(package_copy):
    """site_windows' description, edited wherever it is declared: only site_windows reruns."""
    before = every_rule_digest()
    edit_text(package_copy, STAGES["site_windows"].description, "site_calls' candidates, edited.")
    after = every_rule_digest()
    assert [rule for rule in RULES if after[rule] != before[rule]] == ["site_windows"]


def test_an_edit_of_a_shared_piece_changes_the_digests_of_the_rules_that_use_it(package_copy):
    users = [
        rule for rule in RULES if SHARED in source_digest.module_closure(f"workflow_scripts.rules.{rule}")
    ]
    assert {"site_windows", "site_calls", "make_calls", "train"} <= set(users) and len(users) < len(RULES)
    before = every_rule_digest()
    shared = package_copy / "config" / "stages" / "shared.py"
    shared.write_text(shared.read_text() + "# an edit\n")
    after = every_rule_digest()
    assert [rule for rule in RULES if after[rule] != before[rule]] == users


@pytest.mark.parametrize("rule", RULES)
def test_a_rules_code_holds_its_own_declaration_and_no_other(rule):
    closure = source_digest.module_closure(f"workflow_scripts.rules.{rule}")
    declarations = {name for name in closure if name.startswith(f"{DECLARATIONS}.")} - {SHARED}
    assert declarations == {f"{DECLARATIONS}.{rule}"}
