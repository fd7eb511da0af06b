"""A digest of the errorseq code one rule runs, so that a code change reruns the rule.

The code of a rule is its entry point `workflow_scripts.rules.<rule>` and every errorseq module
that it imports (at the top or inside a function) or names as a module to start (torchrun's
worker), transitively, with their packages' `__init__.py`. Each module counts as its bytes: any
edit of one of them, a comment too, counts as a change.

rules/common.smk gives every rule this digest as the param `code`, so `snakemake -n` says
"params changed" when the code did; training keys its checkpoints on it, so a code-changed
rerun trains afresh instead of resuming. Only the standard library: Snakemake imports it.
"""

from __future__ import annotations

import functools
import hashlib
import re
from pathlib import Path

PACKAGE = "workflow_scripts"
PACKAGE_DIR = Path(__file__).resolve().parent
# Read with regular expressions, not ast: Snakemake computes every rule's digest at start-up.
FROM_IMPORT = re.compile(r"^[ \t]*from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#]*)", re.MULTILINE)
IMPORT = re.compile(r"^[ \t]*import[ \t]+([^\n#]*)", re.MULTILINE)
MODULE_STRING = re.compile(rf"[\"']({PACKAGE}(?:\.\w+)+)[\"']")
DIGEST_CHARS = 16


def rule_code_digest(rule: str) -> str:
    """The digest of the code the rule `rule` runs (its entry point's closure)."""
    return code_digest(f"{PACKAGE}.rules.{rule}")


@functools.cache
def code_digest(module: str) -> str:
    digest = hashlib.sha256()
    for name in sorted(module_closure(module)):
        digest.update(f"{name}\0".encode() + module_source(name) + b"\0")
    return digest.hexdigest()[:DIGEST_CHARS]


def module_closure(module: str) -> set[str]:
    """`module` and every errorseq module it reaches through imports or module names."""
    if module_file(module) is None:
        raise ValueError(f"{module} is not a module of {PACKAGE}")
    found: set[str] = set()
    pending = [module]
    while pending:
        name = pending.pop()
        if name in found:
            continue
        found.add(name)
        pending += [other for other in referenced_modules(name) if other not in found]
    return found


def module_file(module: str) -> Path | None:
    parts = module.split(".")
    if parts[0] != PACKAGE:
        return None
    base = PACKAGE_DIR.joinpath(*parts[1:])
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def parent_packages(module: str) -> list[str]:
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


@functools.cache
def referenced_modules(module: str) -> tuple[str, ...]:
    """The errorseq modules `module` imports or names, and the packages that run on import."""
    path = module_file(module)
    assert path is not None
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    source = path.read_text()
    names = set(parent_packages(module)) | set(MODULE_STRING.findall(source))
    for base, imported in FROM_IMPORT.findall(source):
        base = absolute(base, package)
        names.add(base)
        listed = re.sub(r"#[^\n]*", "", imported).strip("()").split(",")
        names.update(f"{base}.{name.split()[0]}" for name in listed if name.strip())
    for imported in IMPORT.findall(source):
        names.update(name.split()[0] for name in imported.split(","))
    resolved = {nearest_module(name.strip()) for name in names}
    return tuple(sorted(name for name in resolved if name))


def absolute(base: str, package: str) -> str:
    """`from .x import y` → the absolute name of `.x` seen from `package`."""
    level = len(base) - len(base.lstrip("."))
    if not level:
        return base
    anchor = package.split(".")[: len(package.split(".")) - level + 1]
    return ".".join(anchor + ([base.lstrip(".")] if base.lstrip(".") else []))


def nearest_module(name: str) -> str | None:
    """`name` if it is an errorseq module, else its longest prefix that is one (a.b.func → a.b)."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        candidate = ".".join(parts[:end])
        if module_file(candidate) is not None:
            return candidate
    return None


@functools.cache
def module_source(module: str) -> bytes:
    path = module_file(module)
    assert path is not None
    return path.read_bytes()
