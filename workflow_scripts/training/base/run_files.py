"""One train_base run (one seed): its files and settings, as the rule's process hands them to the
ranks in one launch file (launch.json in the run's folder; `--launch-file` is torchrun's whole
argument to them). Every path in it came into the job as a declared input or output."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workflow_scripts.config.train_base import TrainBaseSection
from workflow_scripts.errors import InputError
from workflow_scripts.io_utils import write_json
from workflow_scripts.training.base.blocks import BaseDataFiles

LAUNCH_FILE = "launch.json"
STEPS_FILE = "steps.jsonl"
CURVES_FILE = "curves.png"
TENSORBOARD_DIR = "tensorboard"
CHECKPOINTS_DIR = "checkpoints"
EPOCHS_DIR = "epochs"


def model_name(context: int, seed: int) -> str:
    """OpenSpliceAI's file name: model_<context>nt_rs<seed>.pt."""
    return f"model_{context}nt_rs{seed}.pt"


@dataclass(frozen=True)
class BaseRun:
    seed: int
    data: BaseDataFiles
    init_weights: str | None  # None: from scratch
    out_model: str  # model_<context>nt_rs<seed>.pt
    out_provenance: str  # its provenance JSON
    out_card: str  # its model card (markdown)
    run_dir: str  # the run's working folder: launch.json, checkpoints/, steps.jsonl, curves.png
    console: str | None = None

    @property
    def launch_file(self) -> Path:
        return Path(self.run_dir) / LAUNCH_FILE

    @property
    def checkpoint_dir(self) -> Path:
        return Path(self.run_dir) / CHECKPOINTS_DIR

    @property
    def steps(self) -> Path:
        return Path(self.run_dir) / STEPS_FILE

    @property
    def curves(self) -> Path:
        return Path(self.run_dir) / CURVES_FILE

    def epoch_model(self, context: int, epoch: int) -> Path:
        """The weights after epoch `epoch` (1-based), OpenSpliceAI's format."""
        return Path(self.run_dir) / EPOCHS_DIR / f"model_{context}nt_rs{self.seed}_epoch{epoch}.pt"

    @property
    def tensorboard_dir(self) -> Path:
        return Path(self.run_dir) / TENSORBOARD_DIR


def write_launch_file(run: BaseRun, section: TrainBaseSection, cluster: dict | None) -> Path:
    payload = {"run": dataclasses.asdict(run), "train_base": section.to_dict(), "cluster": cluster}
    write_json(run.launch_file, payload)
    return run.launch_file


def read_launch_file(path: str | Path) -> tuple[BaseRun, TrainBaseSection, dict | None]:
    try:
        payload: dict[str, Any] = json.loads(Path(path).read_text())
        fields = dict(payload["run"])
        fields["data"] = BaseDataFiles(**fields["data"])
        return BaseRun(**fields), TrainBaseSection.from_completed(payload["train_base"]), payload["cluster"]
    except (OSError, json.JSONDecodeError, KeyError, TypeError) as error:
        raise InputError(str(path), "(launch file)", f"not one train_base wrote ({error})") from None
