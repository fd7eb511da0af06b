"""A run directory remembers the config files its runs were given, and refuses a run without them.

The example configs each name their own directory (`--directory runs/x --configfile
config/x.yaml`). The same command without `--configfile` (a dry run typed from memory, a
`snakemake --cores all` to resume) would read only config/config.yaml: it planned the demo in
runs/x, beside the example's results, without a word. So every run that is given config files
records them in RECORD under the run directory's .snakemake/, and a later run there that is given
none (only the defaults next to the Snakefile) stops with one line naming them. A run with other
config files is not refused: changing a setting by a file of its own is how a run is tuned. The
checkout itself, where the defaults are the demo's, is no such directory; Snakemake's maintenance
commands, which plan nothing, are never refused (MAINTENANCE).

Only the standard library: rules/common.smk calls it while Snakemake parses the workflow.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

from workflow_scripts.errors import InputError

RECORD = Path(".snakemake") / "errorseq" / "config_files.json"
MAINTENANCE = ("--unlock", "--cleanup-metadata", "--cm", "--list-changes", "--lc", "--cleanup-shadow")


def given_files(config_files: Sequence[str], default: str) -> list[str]:
    """The config files a run was given, absolute, without the defaults every run reads."""
    default_path = os.path.realpath(default)
    return [os.path.abspath(path) for path in config_files if os.path.realpath(path) != default_path]


def check_run_directory(
    config_files: Sequence[str],
    default: str,
    argv: Sequence[str] = (),
    directory: str | Path = ".",
) -> None:
    """Record the config files a run is given in `directory`; refuse a run given none where an
    earlier one was given some (InputError naming them). `default`: config/config.yaml beside the
    Snakefile; a run in its checkout is neither recorded nor refused."""
    checkout = Path(default).resolve().parent.parent
    if Path(directory).resolve() == checkout or any(word in MAINTENANCE for word in argv):
        return
    record = Path(directory) / RECORD
    given = given_files(config_files, default)
    if given:
        remember(record, given)
        return
    remembered = recalled(record)
    if remembered:
        shown = " ".join(f"--configfile {path}" for path in remembered)
        raise InputError(
            "config",
            "--configfile",
            f"this directory's runs were given {shown}; without it this run would plan the demo "
            f"here. Give it again (or another config file), or delete {RECORD} to use the defaults",
        )


def remember(record: Path, given: list[str]) -> None:
    if recalled(record) == given:
        return
    record.parent.mkdir(parents=True, exist_ok=True)
    partial = record.with_name(f"{record.name}.{os.getpid()}.partial")
    partial.write_text(json.dumps(given, indent=1) + "\n")
    os.replace(partial, record)


def recalled(record: Path) -> list[str]:
    try:
        files = json.loads(record.read_text())
    except (OSError, json.JSONDecodeError):
        return []
    return [str(path) for path in files] if isinstance(files, list) else []
