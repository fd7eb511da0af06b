"""One declaration per stage: its inputs, outputs, config and options, written once.

A `Stage` names a rule's files (`Input`, `Output`), the config it reads (whole sections, or named
keys of a section: a rule that reads few keys gets only those, so a change of another key does not
rerun it) and its other options (`Option`: resources, wildcards). From it come

- the program's parser: `paths, cfg = STAGE.parse(argv)` in each workflow_scripts/rules/<rule>.py,
  `paths` the command line's paths and options (`paths.windows`, `paths.out_metrics`,
  `paths.gpus`), `cfg` the declared sections typed (config/types.py, `cfg.calling`);
- the rule's shell-line flags (`path_flags`, rules/common.smk `path_args(rule)`) and its
  `--config` JSON (`config_json`, rules/common.smk `stage_config(rule)`).

A key a stage did not declare cannot be read: `cfg.calling.threshold` raises UndeclaredConfig in a
stage that declared only calling's `biotypes`, rather than returning the schema's default.
Light on purpose (no torch, polars or scikit-learn): Snakemake imports it while parsing the rules.
"""

from __future__ import annotations

import argparse
import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from workflow_scripts.command_line import input_flag, output_flag, path_flags
from workflow_scripts.config.sections import parse_rule_config, rule_config_json
from workflow_scripts.config.types import typed_section

WHOLE = None  # a section read whole, in Stage.config


@dataclass(frozen=True)
class Input:
    """A named input: `--<name> PATH` (`many`: PATH...). `passed` False: Snakemake tracks the
    file but the program does not take it (it reads it through the config, say). `key`: the
    config key the path comes from ("sites.transfer"): it leaves `--config`, so the path enters
    the job once, as this input (its digest the rerun trigger), and `cfg.<key>` reads it there."""

    name: str
    help: str
    required: bool = True
    many: bool = False
    passed: bool = True
    key: str | None = None


@dataclass(frozen=True)
class Output(Input):
    """A named output: `--out-<name> PATH`."""


@dataclass(frozen=True)
class Option:
    """Any other flag: a resource (`--gpus`), a wildcard (`--experiment`), a folder."""

    name: str
    help: str
    type: Any = str
    default: Any = None
    required: bool = False
    many: bool = False  # several values (default: none)

    @property
    def flag(self) -> str:
        return input_flag(self.name)


# the rule's inputs that make `--genome`: the genome index (index_genome's outputs) or a FASTA
GENOME_INPUTS = ("index", "sequence", "genome")


class UndeclaredConfig(AttributeError):
    """A stage read a config section or key it did not declare."""


class DeclaredKeys:
    """A typed section of which a stage may read only `keys` (the others would be the schema's
    defaults, not the user's values: the workflow passes only the declared keys)."""

    def __init__(self, name: str, section: Any, keys: Sequence[str]) -> None:
        self._name = name
        self._section = section
        self._keys = tuple(keys)

    def __getattr__(self, key: str) -> Any:
        if key.startswith("_"):
            raise AttributeError(key)
        if key not in self._keys:
            raise UndeclaredConfig(
                f"{self._name}.{key} is not among the keys this stage declared ({', '.join(self._keys)})"
            )
        return getattr(self._section, key)

    def to_dict(self) -> dict[str, Any]:
        return {key: value for key, value in self._section.to_dict().items() if key in self._keys}


class StageConfig:
    """The declared sections, typed: `cfg.<section>`; an undeclared one raises UndeclaredConfig."""

    def __init__(self, rule: str, sections: Mapping[str, Any], completed: Mapping[str, Any]) -> None:
        self._rule = rule
        self._sections = dict(sections)
        self._completed = dict(completed)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        if name not in self._sections:
            raise UndeclaredConfig(f"the {self._rule} stage did not declare the config section {name!r}")
        return self._sections[name]

    def sections(self) -> dict[str, Any]:
        """{section: typed section} of the declared sections present (an optional one only when given)."""
        return {name: section for name, section in self._sections.items() if section is not None}

    def completed(self, name: str) -> Any:
        """The section as the schema completed it, a plain dict (a list for `experiments`; only the
        declared keys of a subset), for a library that still wants one; None for an optional
        section that is absent."""
        getattr(self, name)  # an undeclared section raises
        return copy.deepcopy(self._completed.get(name))

    def given(self) -> dict[str, Any]:
        """{section: completed} of every section this stage was given: what its provenance records."""
        return copy.deepcopy(self._completed)


@dataclass(frozen=True)
class Stage:
    """One rule's declaration. `config`: {section: WHOLE or the keys read}; `genome`: the rule
    reads the genome (`--genome DIR|FASTA`, from the inputs GENOME_INPUTS; `genome_optional`: it may
    do without); `per_run`: the config
    as the `{experiment}` run sees it (config/runs.py run_sections; the section `experiment` is
    the run's entry); `optional_config`: sections the program reads when `--config` holds them
    (None when absent; the workflow passes those of them `config` declares); `only_when`:
    {"section.key": "other.switch"}, a declared key the workflow passes only while the switch is
    on (so a change of it reruns nothing that does not use it)."""

    rule: str
    description: str
    inputs: tuple[Input, ...] = ()
    outputs: tuple[Output, ...] = ()
    config: Mapping[str, tuple[str, ...] | None] = field(default_factory=dict)
    options: tuple[Option, ...] = ()
    genome: bool = False
    genome_optional: bool = False
    per_run: bool = False
    optional_config: tuple[str, ...] = ()
    only_when: Mapping[str, str] = field(default_factory=dict)

    # -- the workflow's side: flags and --config from the declaration --------------------------

    def input_names(self) -> tuple[str, ...]:
        """Every input name the rule may have (GENOME_INPUTS too where it reads the genome)."""
        return tuple(item.name for item in self.inputs) + (GENOME_INPUTS if self.genome else ())

    def output_names(self) -> tuple[str, ...]:
        return tuple(item.name for item in self.outputs)

    def path_flags(self, inputs: Mapping[str, Any], outputs: Mapping[str, Any]) -> list[str]:
        """The passed inputs and outputs among `inputs` and `outputs` (name -> paths) as flags."""
        return path_flags(
            {item.name: inputs.get(item.name) for item in self.inputs if item.passed},
            {item.name: outputs.get(item.name) for item in self.outputs if item.passed},
        )

    def config_sections(self) -> tuple[str, ...]:
        return tuple(self.config)

    def config_json(self, sections: Mapping[str, Any]) -> str:
        """The `--config` value: the declared sections of `sections` (the workflow's validated
        config, or a run's view of it), each whole or only its declared keys that are set."""
        chosen = {}
        for name, keys in self.config.items():
            values = sections[name]
            if keys is not WHOLE:
                values = {
                    key: values[key]
                    for key in keys
                    if key in values and self.passes(f"{name}.{key}", sections)
                }
            chosen[name] = values
        for key in self.input_keys():
            chosen = without_key(chosen, key)
        return rule_config_json(chosen, *chosen)

    def input_keys(self) -> tuple[str, ...]:
        """The config keys that come to the job as inputs (Input.key), not in `--config`."""
        return tuple(item.key for item in self.inputs if item.key)

    def passes(self, key: str, sections: Mapping[str, Any]) -> bool:
        """Whether the workflow passes the declared `section.key` (only_when: while its switch is on)."""
        if key not in self.only_when:
            return True
        section, switch = self.only_when[key].split(".")
        return bool(sections.get(section, {}).get(switch))

    # -- the program's side: the parser ---------------------------------------------------------

    def parser(self) -> argparse.ArgumentParser:
        parser = argparse.ArgumentParser(
            prog=f"python -m workflow_scripts.rules.{self.rule}", description=self.description
        )
        for item in self.inputs:
            if item.passed:
                add_path(parser, input_flag(item.name), item)
        if self.genome:
            parser.add_argument(
                "--genome",
                required=not self.genome_optional,
                help="genome index directory (index_genome) or a FASTA file",
            )
        for item in self.outputs:
            if item.passed:
                add_path(parser, output_flag(item.name), item)
        if self.config or self.optional_config:
            described = ", ".join(
                name if keys is WHOLE else f"{name} ({', '.join(keys)})" for name, keys in self.config.items()
            )
            described += "".join(
                f", {name} (optional)" for name in self.optional_config if name not in self.config
            )
            parser.add_argument(
                "--config",
                default="{}",
                help=f"JSON object of the config {described} (missing keys take the schema's defaults)",
            )
        for option in self.options:
            if option.many:
                parser.add_argument(
                    option.flag, nargs="+", default=[], required=option.required, help=option.help
                )
            else:
                parser.add_argument(
                    option.flag,
                    type=option.type,
                    default=option.default,
                    required=option.required,
                    help=option.help,
                )
        return parser

    def parse(self, argv: Sequence[str] | None = None) -> tuple[argparse.Namespace, StageConfig]:
        """The command line's paths and options, and the declared config typed."""
        args = self.parser().parse_args(argv)
        text = getattr(args, "config", "{}")
        if hasattr(args, "config"):
            del args.config
        keyed = {item.key: getattr(args, item.name) for item in self.inputs if item.key and item.passed}
        return args, self.typed_config(text, keyed)

    def typed_config(self, text: str, keyed: Mapping[str, Any] | None = None) -> StageConfig:
        """`--config` JSON → the declared sections, schema-completed and typed. What the JSON holds
        beyond the declaration (another section, a key outside a declared subset) is dropped: the
        stage cannot read it, and the schema's default never stands in for it."""
        readable = {**{name: WHOLE for name in self.optional_config}, **self.config}
        required = tuple(name for name in self.config if name not in self.optional_config)
        completed = parse_rule_config(text, required, keep=readable)
        for key, value in (keyed or {}).items():  # an Input.key: its value is the input's path
            completed = with_key(completed, key, value)
        typed: dict[str, Any] = {name: None for name in self.optional_config}
        for name, values in completed.items():
            keys = self.config.get(name, WHOLE)
            section = typed_section(name, values)
            if keys is not WHOLE:
                section = DeclaredKeys(name, section, keys)
                completed[name] = {key: value for key, value in values.items() if key in keys}
            typed[name] = section
        return StageConfig(self.rule, typed, completed)


def without_key(sections: Mapping[str, Any], key: str) -> dict[str, Any]:
    """A copy of `sections` without the dotted `key` ("calling.base_model.weights")."""
    first, _, rest = key.partition(".")
    copied = dict(sections)
    if first in copied and isinstance(copied[first], Mapping):
        copied[first] = (
            without_key(copied[first], rest)
            if "." in rest
            else {name: value for name, value in copied[first].items() if name != rest}
        )
    return copied


def with_key(sections: Mapping[str, Any], key: str, value: Any) -> dict[str, Any]:
    """A copy of `sections` whose dotted `key` holds `value` (where its section is there)."""
    first, _, rest = key.partition(".")
    copied = dict(sections)
    if first in copied and isinstance(copied[first], Mapping):
        copied[first] = (
            with_key(copied[first], rest, value) if "." in rest else {**copied[first], rest: value}
        )
    return copied


def add_path(parser: argparse.ArgumentParser, flag: str, item: Input) -> None:
    parser.add_argument(flag, nargs="+" if item.many else None, required=item.required, help=item.help)
