"""The params functions rules/*.smk share: a rule's paths as its shell line's flags and its
`--config`, both from its declaration (config/stages/), the digests
that rerun it when its code or the user's files change, and the run-name pattern of the
`{experiment}` wildcard. Snakemake calls the returned functions with the job's wildcards (and
its `input` and `output`, Namedlists: `.get(name)`, `.keys()`).
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from workflow_scripts.config.runs import Run, run_sections
from workflow_scripts.config.stages import STAGES
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


def path_args(rule: str) -> Callable[[Any, Any, Any], str]:
    """A params function: the job's inputs and outputs that `rule`'s declaration passes
    (config/stages/) as `--<name> PATH...` and `--out-<name> PATH...`, quoted, in the
    declaration's order; an optional input that is off adds nothing (workflow_scripts/command_line.py,
    which the tests call too)."""
    stage = STAGES[rule]

    def args(wildcards: Any, input: Any, output: Any) -> str:
        names = {name: input.get(name) for name in input.keys()}
        return shlex.join(stage.path_flags(names, {name: output.get(name) for name in output.keys()}))

    return args


def stage_config(config: dict, runs: Mapping[str, Run], rule: str) -> str | Callable[[Any], str]:
    """`rule`'s `--config` param: its declared sections and keys of the workflow's `config`
    (config/stages/); for a stage of one run, a function of the wildcards that gives them as
    the `{experiment}` run sees them (config/runs.py run_sections)."""
    stage = STAGES[rule]
    if not stage.per_run:
        return stage.config_json(config)

    def for_run(wildcards: Any) -> str:
        return stage.config_json(run_sections(config, runs[wildcards.experiment], stage.config_sections()))

    return for_run


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
