"""benchmarks/ as a package, read from its source (fast): every benchmark in the catalogue, no
import cycles among benchmarks/ and testkit/, nothing imported from tests/. That every module
imports, and the benchmarks' own runs: test_benchmarks.py."""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path

import benchmarks
from benchmarks.catalogue import BENCHMARKS

ROOT = Path(benchmarks.__file__).resolve().parents[1]
PACKAGES = ("benchmarks", "testkit")


def module_names() -> list[str]:
    names = []
    for package in PACKAGES:
        root = importlib.import_module(package)
        names += [info.name for info in pkgutil.walk_packages(root.__path__, f"{package}.")]
    return names


def imports_of(name: str) -> set[str]:
    """Every module `name` imports, at the top or inside a function."""
    path = ROOT.joinpath(*name.split("."))
    source = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
    found = set()
    for node in ast.walk(ast.parse(source.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
    return found


def import_graph() -> dict[str, set[str]]:
    names = set(module_names())
    return {name: {other for other in imports_of(name) if other in names and other != name} for name in names}


def cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle, or None (depth-first search)."""
    state: dict[str, str] = {}

    def visit(node: str, path: list[str]) -> list[str] | None:
        state[node] = "open"
        for other in sorted(graph[node]):
            if state.get(other) == "open":
                return path[path.index(other) :] + [other] if other in path else [node, other]
            if other not in state and (found := visit(other, [*path, other])):
                return found
        state[node] = "done"
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node, [node])):
            return found
    return None


def test_benchmarks_and_testkit_import_without_cycles_and_nothing_from_tests():
    graph = import_graph()
    assert cycle(graph) is None, f"import cycle: {' → '.join(cycle(graph))}"
    from_tests = {name: sorted(i for i in imports_of(name) if i.split(".")[0] == "tests") for name in graph}
    assert {name: found for name, found in from_tests.items() if found} == {}


def test_the_cycle_check_finds_a_cycle():
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert cycle({"a": {"b"}, "b": set()}) is None


def defines_main(name: str) -> bool:
    path = ROOT.joinpath(*name.split("."))
    source = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
    tree = ast.parse(source.read_text())
    return any(isinstance(node, ast.FunctionDef) and node.name == "main" for node in tree.body)


def test_the_catalogue_runs_every_module_with_a_main_and_only_those():
    mains = {name for name in module_names() if name.startswith("benchmarks.") and defines_main(name)}
    helpers = {"benchmarks.__main__", "benchmarks.scale.synthetic_genome", "benchmarks.peers.trainer"}
    assert {b.module for b in BENCHMARKS} == mains - helpers
    assert len({b.name for b in BENCHMARKS}) == len(BENCHMARKS)
