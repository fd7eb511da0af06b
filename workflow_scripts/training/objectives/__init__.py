"""Training objectives: `classification` (rule train) and `masked_lm` (rule pretrain)."""

from __future__ import annotations

from workflow_scripts.config.train import ObjectiveSettings
from workflow_scripts.config.types import ModelSection, PretrainSection
from workflow_scripts.training.objectives.base import Objective
from workflow_scripts.training.objectives.classification import Classification
from workflow_scripts.training.objectives.masked_lm import MaskedLM

OBJECTIVES: dict[str, type[Objective]] = {"classification": Classification, "masked_lm": MaskedLM}


def build_objective(
    name: str, settings: ObjectiveSettings, model: ModelSection, pretrain: PretrainSection | None = None
) -> Objective:
    """The objective `name` for what it reads of `train:` and its typed sections (config/types.py),
    as the schema completed them already (parse_typed_config): nothing is checked again here."""
    return OBJECTIVES[name](settings, model, pretrain)
