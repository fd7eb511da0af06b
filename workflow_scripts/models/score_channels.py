"""The base model's score profiles as input channels aligned with the sequence (`model.score_channels`).

A windows table may carry `donor_scores` and `acceptor_scores`: List(Float32), one score per base of
`sequence` in its reading direction (0.0 where the base model did not score). With
`score_channels: auto` (the default) a model takes them when the windows carry both, `on` requires
them, `off` ignores them. Which were used is recorded in model.json (artifacts.SCORE_CHANNELS_FIELD),
so evaluate, explain and predict feed them again and refuse windows or calls without them.

Data side: `read_profiles` checks the columns and keeps one flat float32 array [bases, 2] of every
window's profile (`BaseProfiles`); tokenization/token_scores.py pools it per token span.
Model side: `ScoreProjection` turns a token's two scores into four numbers, each probability as
itself and as a clipped, scaled logit, and projects them to the model's width, added to the token
embeddings position by position. Both forms, because they resolve different ranges: the logit
separates the low tail (0.001 against 0.01: the candidates below a call threshold), where raw
probabilities are all near 0, and saturates near 1, where raw probabilities still differ
(0.5 against 0.9). Padding positions get 0, in the batch and after the projection.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl
import torch
from torch import nn

from workflow_scripts.artifacts import SCORE_CHANNELS_FIELD
from workflow_scripts.errors import InputError
from workflow_scripts.models.call_inputs import LOGIT_SCALE, SCORE_CLIP

SCORE_CHANNEL_COLUMNS = ("donor_scores", "acceptor_scores")
SETTING_KEY = "model.score_channels"


def setting_mode(setting: str | bool) -> str:
    """auto, on or off (YAML reads a bare on/off as true/false: taken the same)."""
    if isinstance(setting, bool):
        return "on" if setting else "off"
    return setting


def windows_score_channels(setting: str | bool, windows_path) -> list[str]:
    """The score channel columns a model trained on these windows takes (none, or both)."""
    mode = setting_mode(setting)
    present = set(pl.read_parquet_schema(windows_path))
    if mode == "off" or (mode == "auto" and not present.issuperset(SCORE_CHANNEL_COLUMNS)):
        return []
    for name in SCORE_CHANNEL_COLUMNS:
        if name not in present:
            raise InputError(windows_path, name, f"column missing: {SETTING_KEY} is on")
    return list(SCORE_CHANNEL_COLUMNS)


def saved_score_channels(saved: Mapping) -> list[str]:
    """The score channel columns a trained model takes, from its model.json (older: none)."""
    return list(saved.get(SCORE_CHANNELS_FIELD) or [])


@dataclass
class BaseProfiles:
    """Window i's per-base scores are values[offsets[i] : offsets[i + 1]] ([bases, channels])."""

    values: np.ndarray  # float32 [total bases, channels]
    offsets: np.ndarray  # int64 [windows + 1]

    def window(self, index: int) -> np.ndarray:
        return self.values[self.offsets[index] : self.offsets[index + 1]]

    def rows(self, start: int, stop: int) -> BaseProfiles:
        """Windows start .. stop - 1 (a view, offsets from 0)."""
        offsets = self.offsets[start : stop + 1]
        return BaseProfiles(self.values[offsets[0] : offsets[-1]], offsets - offsets[0])

    def repeated(self, index: int, times: int) -> BaseProfiles:
        """Window `index`'s profile `times` over (the variants of in-silico mutagenesis)."""
        return from_windows([self.window(index)] * times, self.values.shape[1])


def from_windows(parts: Sequence[np.ndarray], channels: int) -> BaseProfiles:
    lengths = np.fromiter((len(part) for part in parts), dtype=np.int64, count=len(parts))
    values = np.concatenate(parts) if parts else np.zeros((0, channels), np.float32)
    return BaseProfiles(values.astype(np.float32, copy=False), np.concatenate([[0], np.cumsum(lengths)]))


def read_profiles(frame: pl.DataFrame, channels: Sequence[str], source) -> BaseProfiles | None:
    """The windows' score profiles, checked against their sequences; None without channels."""
    if not channels:
        return None
    sequence_lengths = frame["sequence"].str.len_chars().to_numpy().astype(np.int64)
    columns = [checked_column(frame, name, sequence_lengths, source) for name in channels]
    offsets = np.concatenate([[0], np.cumsum(sequence_lengths)])
    return BaseProfiles(np.stack(columns, axis=1), offsets)


def checked_column(frame: pl.DataFrame, name: str, sequence_lengths: np.ndarray, source) -> np.ndarray:
    """One column's scores, flat in window order, float32; InputError naming the row otherwise."""
    if name not in frame.columns:
        raise InputError(source, name, "column missing: the model takes it as score channel")
    column = frame[name]
    if not isinstance(column.dtype, pl.List):
        raise InputError(source, name, f"a list of scores per window expected, found {column.dtype}")
    lengths = column.list.len().fill_null(-1).to_numpy()
    wrong = np.flatnonzero(lengths != sequence_lengths)
    if len(wrong):
        row = int(wrong[0])
        found = "no scores" if lengths[row] < 0 else f"{lengths[row]} scores"
        raise InputError(source, name, f"row {row + 1}: {found} for a {sequence_lengths[row]}-nt sequence")
    values = column.explode(empty_as_null=False).cast(pl.Float64).to_numpy()
    bad = np.flatnonzero(~((values >= 0) & (values <= 1)))  # NaN and missing fail both
    if len(bad):
        ends = np.cumsum(lengths)
        row = int(np.searchsorted(ends, bad[0], side="right"))
        base = int(bad[0] - (ends[row] - lengths[row]))
        found = f"{values[bad[0]]:g}".replace("nan", "missing or NaN")
        raise InputError(source, name, f"row {row + 1}, base {base + 1}: {found} is not a score in [0, 1]")
    return values.astype(np.float32)


def score_features(scores: torch.Tensor) -> torch.Tensor:
    """[..., C] probabilities → [..., 2C]: each as itself and as a clipped logit / LOGIT_SCALE."""
    clipped = scores.clamp(SCORE_CLIP, 1 - SCORE_CLIP)
    return torch.cat([scores, torch.logit(clipped) / LOGIT_SCALE], dim=-1)


class ScoreProjection(nn.Module):
    """[B, T, channels] scores → [B, T, width], added to the token embeddings; 0 at padding.

    Its weights start at the scale of the embeddings they are added to (`scale`: their standard
    deviation), so that neither input starts drowned by the other: with nn.Linear's own init
    (sd 0.29 for four inputs) beside the built-in model's N(0, 1) embeddings, the default CNN
    did not learn a label carried by the scores alone in 8 epochs (test ROC-AUC 0.49); with
    N(0, 1) weights it did in 3 (0.92; docs/models.md)."""

    def __init__(self, channels: int, width: int, scale: float):
        super().__init__()
        self.channels = channels
        self.linear = nn.Linear(2 * channels, width)
        nn.init.normal_(self.linear.weight, std=scale)
        nn.init.zeros_(self.linear.bias)

    def forward(self, scores: torch.Tensor | None, mask: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
        if scores is None:
            raise ValueError(f"this model takes {self.channels} score channels; none were given")
        projected = self.linear(score_features(scores.float()).to(dtype))
        return projected * mask.unsqueeze(-1).to(projected.dtype)
