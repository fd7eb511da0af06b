"""The base model's call as model input beside the sequence (`model.call_inputs`).

A call carries what the base model knew: its `score` and the `splice_type` it called. With
`call_inputs: auto` every one of these columns the windows carry becomes a model input; a list
names them explicitly (a missing one is an error); `[]` trains on the sequence alone. The columns
used are recorded in model.json (artifacts.MODEL_INPUT_COLUMNS_FIELD), so evaluate, explain and
predict feed the same inputs and refuse a calls table without them.

Each column becomes a few numbers (`feature_matrix`): the score as itself and as a scaled logit
(scores crowd near 0 and 1, where the logit still separates them), the splice type as 1 for an
acceptor and 0 for a donor.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import polars as pl
import torch
from torch import nn

from workflow_scripts.artifacts import MODEL_INPUT_COLUMNS_FIELD
from workflow_scripts.errors import InputError

SCORE, SPLICE_TYPE = "score", "splice_type"
CALL_INPUT_COLUMNS = (SCORE, SPLICE_TYPE)
SPLICE_TYPES = ("donor", "acceptor")
FEATURE_WIDTHS = {SCORE: 2, SPLICE_TYPE: 1}
SCORE_CLIP = 1e-6  # the logit of a score is taken within [SCORE_CLIP, 1 - SCORE_CLIP]
LOGIT_SCALE = 10.0  # |logit| <= 13.8 at that clip; scaled to about the score's own range


def resolve_input_columns(setting: str | Sequence[str], frame: pl.DataFrame, source) -> list[str]:
    """The call columns the model takes, from `model.call_inputs` and the windows table."""
    if setting == "auto":
        return [name for name in CALL_INPUT_COLUMNS if usable(frame, name)]
    columns = list(setting)
    for name in columns:
        if name not in frame.columns:
            raise InputError(source, name, "column missing: model.call_inputs asks for it")
        check_values(frame, name, source)
    return columns


def windows_input_columns(setting: str | Sequence[str], windows_path) -> list[str]:
    """resolve_input_columns on a windows parquet, reading only the call input columns."""
    wanted = CALL_INPUT_COLUMNS if setting == "auto" else tuple(setting)
    present = [name for name in wanted if name in pl.read_parquet_schema(windows_path)]
    return resolve_input_columns(setting, pl.read_parquet(windows_path, columns=present), windows_path)


def usable(frame: pl.DataFrame, name: str) -> bool:
    """Present with a value in every row (auto mode skips a column that is not)."""
    return name in frame.columns and frame.height > 0 and frame[name].null_count() == 0


def feature_width(columns: Sequence[str]) -> int:
    return sum(FEATURE_WIDTHS[name] for name in columns)


def feature_matrix(frame: pl.DataFrame, columns: Sequence[str], source) -> np.ndarray | None:
    """[rows, feature_width(columns)] float32, or None when the model takes no call inputs."""
    if not columns:
        return None
    parts = []
    for name in columns:
        check_values(frame, name, source)
        if name == SCORE:
            score = frame[SCORE].cast(pl.Float64).to_numpy()
            clipped = np.clip(score, SCORE_CLIP, 1 - SCORE_CLIP)
            parts += [score, np.log(clipped / (1 - clipped)) / LOGIT_SCALE]
        else:
            parts.append((frame[SPLICE_TYPE].cast(pl.String) == "acceptor").to_numpy().astype(np.float64))
    return np.stack(parts, axis=1).astype(np.float32)


def check_values(frame: pl.DataFrame, name: str, source) -> None:
    if name not in FEATURE_WIDTHS:
        raise InputError(source, name, f"not a call input (one of {', '.join(CALL_INPUT_COLUMNS)})")
    column = frame[name]
    if column.null_count():
        row = int(column.is_null().arg_max() or 0)
        raise InputError(source, name, f"row {row + 1}: empty, but the model takes it as input")
    if name == SCORE:
        values = column.cast(pl.Float64, strict=False)
        bad = values.is_null() | (values < 0) | (values > 1) | values.is_nan()
        if bad.any():
            row = int(bad.arg_max() or 0)
            raise InputError(source, SCORE, f"row {row + 1}: {column[row]!r} is not a score in [0, 1]")
    else:
        bad = ~column.cast(pl.String).is_in(SPLICE_TYPES)
        if bad.any():
            row = int(bad.arg_max() or 0)
            raise InputError(source, SPLICE_TYPE, f"row {row + 1}: {column[row]!r} is not donor/acceptor")


def saved_input_columns(saved: Mapping) -> list[str]:
    """The call inputs a trained model takes, from its model.json."""
    return list(saved.get(MODEL_INPUT_COLUMNS_FIELD) or [])


class FusedHead(nn.Module):
    """Two-class head over the pooled sequence representation and the embedded call inputs."""

    def __init__(self, pooled: int, n_features: int, hidden: int, dropout: float):
        super().__init__()
        self.n_features = n_features
        self.features = nn.Sequential(nn.Linear(n_features, hidden), nn.GELU()) if n_features else None
        width = pooled + (hidden if n_features else 0)
        self.mlp = nn.Sequential(
            nn.Linear(width, hidden), nn.GELU(), nn.Dropout(dropout), nn.Linear(hidden, 2)
        )

    def forward(self, pooled: torch.Tensor, features: torch.Tensor | None) -> torch.Tensor:
        if self.features is None:
            return self.mlp(pooled)
        if features is None:
            raise ValueError(f"this model takes {self.n_features} call input features; none were given")
        return self.mlp(torch.cat([pooled, self.features(features.to(pooled.dtype))], dim=-1))
