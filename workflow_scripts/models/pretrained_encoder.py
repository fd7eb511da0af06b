"""Start a classifier from the encoder that masked-LM pretraining exported (encoder.pt)."""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn

from workflow_scripts.errors import InputError


def load_pretrained_encoder(model: nn.Module, path: str | Path) -> tuple[int, list[str]]:
    """Copy the pretrained encoder tensors into `model`; returns (tensors loaded, keys left as
    initialised, i.e. the classification head)."""
    state = torch.load(path, map_location="cpu", weights_only=True)
    try:
        result = model.load_state_dict(state, strict=False)
    except RuntimeError as error:
        raise InputError(
            path,
            "encoder",
            "does not fit the model (was it pretrained with another "
            f"model: config?): {str(error).splitlines()[1:2]}",
        ) from None
    if result.unexpected_keys:
        raise InputError(path, "encoder", f"holds tensors the model lacks: {result.unexpected_keys[:3]}")
    return len(state), list(result.missing_keys)
