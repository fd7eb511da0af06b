"""Training objectives: `classification` (rule train) and `masked_lm` (rule pretrain)."""

from __future__ import annotations

from workflow_scripts.training.objectives.base import Objective
from workflow_scripts.training.objectives.classification import Classification
from workflow_scripts.training.objectives.masked_lm import MaskedLM

OBJECTIVES: dict[str, type[Objective]] = {"classification": Classification, "masked_lm": MaskedLM}


def build_objective(name: str, sections: dict) -> Objective:
    """The objective `name` for the rule's config sections, typed (config/types.py) from what the
    schema completed already (parse_typed_config): nothing is checked again here."""
    return OBJECTIVES[name](sections)
