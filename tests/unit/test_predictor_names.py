"""One name per site predictor, defined once (issue 47): sites/predictors.py spells each
predictor's name and its columns, and holds every table a predictor enters (its score column,
what it is, the pairs compared, the columns it adds, the threshold it must beat). A new optional
predictor touches three files: sites/predictors.py, the module that computes it, and
rules/site_calls.py that calls it (docs/sites.md)."""

from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path

from workflow_scripts.sites import predictors
from workflow_scripts.sites.predictors import KMER, RECOMMENDABLE

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "workflow_scripts"
HOME = PACKAGE / "sites" / "predictors.py"
NAMES = (*RECOMMENDABLE, KMER)
CONSTANTS = {name for name in dir(predictors) if getattr(predictors, name) in NAMES and name.isupper()}


def spelled_names() -> list[str]:
    """The predictors' names that cannot be read as a plain word (base_tuned, transfer_tree, ...)
    and every column named after a predictor (call_tree, tree_threshold, kmer_probability, ...)."""
    columns = [*predictors.CALL_COLUMNS.values(), *predictors.THRESHOLD_COLUMNS.values()]
    columns += [column for column in predictors.SCORE_COLUMNS.values() if column != "base_score"]
    return sorted({*(name for name in NAMES if "_" in name), *columns}, key=len, reverse=True)


def code_strings(path: Path) -> list[str]:
    """The string constants of a module's code (f-string parts included), docstrings left out."""
    tree = ast.parse(path.read_text())
    documented = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, documented) and node.body and isinstance(node.body[0], ast.Expr)
    }
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
    ]


def test_a_predictors_name_and_columns_are_spelled_in_sites_predictors_only():
    pattern = re.compile(r"(?<!\w)(" + "|".join(spelled_names()) + r")(?!\w)")
    spelled = {
        str(path.relative_to(ROOT)): sorted(
            {found for text in code_strings(path) for found in pattern.findall(text)}
        )
        for path in PACKAGE.rglob("*.py")
    }
    assert {path for path, found in spelled.items() if found} == {str(HOME.relative_to(ROOT))}, {
        path: found for path, found in spelled.items() if found and path != str(HOME.relative_to(ROOT))
    }


def predictor_tables(path: Path) -> list[tuple[int, list[str]]]:
    """Tuple, list, set and dict literals of a module holding two or more predictor constants."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.Tuple, ast.List, ast.Set, ast.Dict)):
            items = node.keys if isinstance(node, ast.Dict) else node.elts
            named = [item.id for item in items if isinstance(item, ast.Name) and item.id in CONSTANTS]
            if len(named) >= 2:
                found.append((node.lineno, named))
    return found


# modules that still group predictors by name, and why a new optional predictor leaves them alone
# (remove an entry when its grouping goes; never add one)
KNOWN_GROUPINGS = {
    "workflow_scripts/sites/answer.py": "the answer's sentences about the tree, errorseq and the transfer",
    "workflow_scripts/sites/outputs.py": "the table's first columns: the predictors every run has",
    "workflow_scripts/sites/recommend.py": "the base's own calls: re-tuned or not",
    "workflow_scripts/sites/rescore.py": "sites.transfer: each transferred predictor from its source",
    "workflow_scripts/sites/rescorer.py": "the re-scorer's own thresholds and transferred calls",
    "workflow_scripts/sites/rescorer_files.py": "the re-scorer folder's thresholds",
    "workflow_scripts/sites/summary.py": "the page names the transfer's source beside its predictors",
}


def test_the_tables_a_predictor_enters_are_in_sites_predictors():
    grouping = {
        str(path.relative_to(ROOT))
        for path in PACKAGE.rglob("*.py")
        if path != HOME and predictor_tables(path)
    }
    assert grouping <= set(KNOWN_GROUPINGS), sorted(grouping - set(KNOWN_GROUPINGS))
    assert set(predictors.SCORE_COLUMNS) == set(predictors.DESCRIPTIONS) == set(NAMES)
    assert set(predictors.CALL_COLUMNS) == set(NAMES)
    compared = {name for pair in predictors.COMPARED_PAIRS for name in pair}
    grouped = {name for group in predictors.OPTIONAL_GROUPS.values() for name in group}
    assert compared == set(NAMES) and grouped | {*predictors.PREDICTORS} == set(NAMES)
    assert set(predictors.RESCORERS) == set(predictors.OVER_THE_BASE) <= set(RECOMMENDABLE)
    fields = {field.name for field in dataclasses.fields(predictors.OutOfFold)}
    # each optional score is an OutOfFold field named as its column (sites/site_metrics.py, outputs.py)
    assert {predictors.SCORE_COLUMNS[score] for score in predictors.OPTIONAL_GROUPS} <= fields
