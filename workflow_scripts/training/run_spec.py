"""The files one training run reads and writes, and its name: what the launcher hands the worker."""

from __future__ import annotations

import argparse
import dataclasses
from dataclasses import dataclass

OPTIONAL = {
    "init_encoder": "encoder.pt written by pretrain: the classifier starts from it",
    "genome_dir": "the indexed genome (pretrain.source genome)",
    "console": "a terminal, pipe or file for the short progress lines (the rule's console)",
}


@dataclass(frozen=True)
class RunSpec:
    experiment: str
    windows: str
    manifest: str
    bucket_summary: str
    checkpoint_dir: str  # resumable checkpoints and the partial step log
    out_weights: str  # model.pt (train) or encoder.pt (pretrain)
    out_config: str  # model.json or pretrain.json
    out_steps: str  # steps.jsonl
    init_encoder: str | None = None
    genome_dir: str | None = None
    console: str | None = None

    def to_argv(self) -> list[str]:
        """The worker's arguments for this run (add_run_arguments parses them back)."""
        argv = []
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if value is not None:
                argv += [option(field.name), str(value)]
        return argv


def option(name: str) -> str:
    return "--" + name.replace("_", "-")


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    for field in dataclasses.fields(RunSpec):
        if field.name in OPTIONAL:
            parser.add_argument(option(field.name), help=OPTIONAL[field.name])
        else:
            parser.add_argument(option(field.name), required=True)


def run_spec_from_args(args: argparse.Namespace) -> RunSpec:
    return RunSpec(**{field.name: getattr(args, field.name) for field in dataclasses.fields(RunSpec)})
