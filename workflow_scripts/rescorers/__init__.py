"""Re-scorers that ship with errorseq: `sites.transfer: builtin:<name>` names one of these folders.

Each folder is a re-scorer in the safe format (sites/rescorer_files.py: plain JSON, a tree's node
arrays and safetensors; loading checks every file's sha256 and refuses any file its manifest does
not list), with its model card beside it, `<name>.md`: what it was trained on, how, and its
measured results with intervals; `<name>.measured.json` holds those numbers for the benchmark. `python -m workflow_scripts.rescorers`
lists them; benchmarks/shipped_rescorers.py reproduces each card's numbers from the shipped files.
"""

from __future__ import annotations

from pathlib import Path

from workflow_scripts.errors import InputError

PREFIX = "builtin:"
FOLDER = Path(__file__).resolve().parent
CARD = "{name}.md"
MEASURED = "{name}.measured.json"


def available() -> list[str]:
    """The names of the shipped re-scorers (folders holding a rescorer.json)."""
    return sorted(path.parent.name for path in FOLDER.glob("*/rescorer.json"))


def builtin_path(value: str, key: str) -> str:
    """The folder `builtin:<name>` names; InputError naming `key` and the choices otherwise."""
    name = value[len(PREFIX) :]
    if name not in available():
        choices = ", ".join(available()) or "none"
        raise InputError("config", key, f"{value}: no shipped re-scorer of that name (shipped: {choices})")
    return str(FOLDER / name)


def summary(name: str) -> str:
    """The card's first heading line and its one-line description."""
    card = FOLDER / CARD.format(name=name)
    lines = [line.strip() for line in card.read_text().splitlines() if line.strip()]
    return f"{PREFIX}{name}: {lines[1] if len(lines) > 1 else lines[0]}"
