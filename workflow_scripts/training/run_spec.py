"""The files one training run reads and writes, its name, and the launch file: what the launcher
hands the ranks.

The launcher writes the launch file once, beside the run's JSON record (model/launch.json,
pretrain/launch.json): the objective, the RunSpec and the typed config sections (config/types.py)
the schema completed in the rule's process. torchrun passes its path to every rank
(`--launch-file`); a rank reads them back typed, as they are, without checking them against the
schema again.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workflow_scripts.config.types import typed_sections, untyped_sections
from workflow_scripts.errors import InputError
from workflow_scripts.io_utils import write_json

LAUNCH_FILE = "launch.json"


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
    init_encoder: str | None = None  # encoder.pt written by pretrain: the classifier starts from it
    genome_dir: str | None = None  # the indexed genome (pretrain.source genome)
    console: str | None = None  # a terminal, pipe or file for the short progress lines

    @property
    def launch_file(self) -> Path:
        return Path(self.out_config).parent / LAUNCH_FILE


def write_launch_file(objective: str, sections: dict[str, Any], spec: RunSpec) -> None:
    """What every rank gets: the objective's name, its typed config sections and the run."""
    launched = {
        "objective": objective,
        "sections": untyped_sections(sections),
        "run": dataclasses.asdict(spec),
    }
    write_json(spec.launch_file, launched)


def read_launch_file(path: str | Path) -> tuple[str, dict[str, Any], RunSpec]:
    """(objective name, typed config sections, RunSpec) as write_launch_file wrote them."""
    try:
        launched = json.loads(Path(path).read_text())
        return launched["objective"], typed_sections(launched["sections"]), RunSpec(**launched["run"])
    except (json.JSONDecodeError, KeyError, TypeError) as error:
        raise InputError(str(path), "(launch file)", f"not one the launcher wrote ({error})") from None
