"""The params functions rules/*.smk share: a rule's paths as its shell line's flags, the digests
that rerun it when its code or the user's files change, and the run-name pattern of the
`{experiment}` wildcard. Snakemake calls the returned functions with the job's wildcards (and
its `input` and `output`, Namedlists: `.get(name)`, `.keys()`).
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Callable, Iterable
from typing import Any

from workflow_scripts.command_line import path_flags
from workflow_scripts.input_digest import input_digests
from workflow_scripts.shown_digest import ShownDigest
from workflow_scripts.source_digest import rule_code_digest
from workflow_scripts.workflow.preflight import is_user_file


def runs_pattern(names: Iterable[str]) -> str:
    """A regular expression that matches exactly the run names `names`."""
    return "|".join(map(re.escape, names)) or "(?!)"


def rule_code(rule: str) -> Callable[[Any], ShownDigest]:
    """A digest of the errorseq code that runs for `rule` (workflow_scripts/source_digest.py).
    It is the `code` param of each rule, so an edit of that code reruns it and `snakemake -n`
    says why; train and pretrain then train afresh (their checkpoints are keyed on it too).
    A function of the wildcards: Snakemake keeps what it returns as it is (a string param
    becomes a plain str), so the report shows the ShownDigest's text.
    """
    shown = ShownDigest(rule_code_digest(rule), rule)
    return lambda wildcards: shown


def input_paths(item: Any, wildcards: Any) -> list[str]:
    """The paths in a path, a list, a dict of either (unpack) or a function of the wildcards."""
    value = item(wildcards) if callable(item) else item
    if isinstance(value, dict):
        return [p for entry in value.values() for p in input_paths(entry, wildcards)]
    return [str(path) for path in ([value] if isinstance(value, str) else value)]


def user_input_digests(*inputs: Any) -> Callable[[Any], Any]:
    """A rule's `inputs` param: the content digests of the user's files among `inputs` (paths,
    lists, dicts or input functions), so a file replaced by one of other content reruns the rule
    whatever its mtime (workflow_scripts/input_digest.py). A function of the wildcards alone:
    Snakemake does not record params that are functions of `input`."""

    def digests(wildcards: Any) -> Any:
        paths = [p for item in inputs for p in input_paths(item, wildcards)]
        return input_digests(path for path in paths if is_user_file(path))

    return digests


def path_args(*inputs: str, outputs: Iterable[str] | None = None) -> Callable[[Any, Any, Any], str]:
    """A params function: the job's inputs named in `inputs` as `--<name> PATH...` (nothing for
    an optional input that is off) and its outputs (every named one, or those in `outputs`) as
    `--out-<name> PATH...`, quoted: the paths of a rule's shell line, derived from its input and
    output names (workflow_scripts/command_line.py, which the tests call too)."""

    def args(wildcards: Any, input: Any, output: Any) -> str:
        chosen = output.keys() if outputs is None else outputs
        flags = path_flags(
            {name: input.get(name) for name in inputs},
            {name: output.get(name) for name in chosen},
        )
        return shlex.join(flags)

    return args


def output_dir(name: str) -> Callable[[Any, Any], str]:
    """A params function: the folder of the job's output `name` (a list of files in one folder)."""

    def folder(wildcards: Any, output: Any) -> str:
        return os.path.dirname(output.get(name)[0])

    return folder


def genome_args(wildcards: Any, input: Any) -> str:
    """`--genome DIR` (the genome index directory, index_genome's outputs) when the job reads the
    index, `--genome FASTA` for predict.genome, else nothing (extract from a sequences table).
    """
    if "index" in input.keys():
        return f"--genome {shlex.quote(os.path.dirname(input.index))}"
    if "genome" in input.keys():
        return f"--genome {shlex.quote(str(input.genome))}"
    return ""
