"""Score channels (models/score_channels.py) for Hugging Face backbones.

A Hugging Face model takes token ids, not vectors, and not every model takes `inputs_embeds`
(DNABERT-2's remote code does not). What they share is the module `get_input_embeddings()`
returns: it turns ids into vectors, once per forward pass, before positions, token types and the
embedding LayerNorm. For the duration of one forward pass a hook adds the projected scores to its
output, token by token. A model that does not call it exactly once on ids of the batch's shape
(another tokenizer of its own, embeddings shared with a decoder, ...) is refused with one error
naming model.score_channels; one built-in to transformers or DNABERT-2-style remote code passes.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch
from torch import nn

from workflow_scripts.errors import InputError
from workflow_scripts.models.score_channels import SETTING_KEY, ScoreProjection


def input_embeddings(hf_model: nn.Module) -> nn.Module:
    """The module that turns token ids into vectors (the model's own, else its first Embedding)."""
    try:
        found = getattr(hf_model, "get_input_embeddings")()  # noqa: B009  (an nn.Module attribute to mypy)
    except (AttributeError, NotImplementedError):  # remote code need not name them
        found = None
    if found is None:
        found = next((m for m in hf_model.modules() if isinstance(m, nn.Embedding)), None)
    if found is None:
        raise InputError(
            "config", SETTING_KEY, f"{type(hf_model).__name__} has no input embeddings to add to"
        )
    return found


def score_projection(hf_model: nn.Module, channels: int) -> ScoreProjection:
    """A projection to the width of the model's input embeddings, at their weights' scale."""
    embedding = input_embeddings(hf_model)
    weight = getattr(embedding, "weight", None)
    if not isinstance(weight, torch.Tensor) or weight.dim() != 2:
        raise InputError(
            "config", SETTING_KEY, f"{type(hf_model).__name__}'s input embeddings have no weight matrix"
        )
    return ScoreProjection(channels, weight.shape[1], scale=float(weight.detach().float().std()))


@contextmanager
def scores_added(
    hf_model: nn.Module, projection: ScoreProjection | None, scores: torch.Tensor | None, mask: torch.Tensor
) -> Iterator[None]:
    """While in the block, the input embeddings' output gets `projection(scores)` added."""
    if projection is None:
        yield
        return
    calls = []

    def add(_module, _inputs, output: torch.Tensor) -> torch.Tensor:
        calls.append(tuple(output.shape))
        if output.shape[:2] != mask.shape:
            refuse(
                hf_model, f"its input embeddings gave {tuple(output.shape)} for a {tuple(mask.shape)} batch"
            )
        return output + projection(scores, mask, output.dtype)

    handle = input_embeddings(hf_model).register_forward_hook(add)
    try:
        yield
    finally:
        handle.remove()
    if len(calls) != 1:
        refuse(hf_model, f"its input embeddings ran {len(calls)} times in one forward pass, not once")


def refuse(hf_model: nn.Module, reason: str) -> None:
    raise InputError(
        "config",
        SETTING_KEY,
        f"{type(hf_model).__name__} cannot take score channels ({reason}); set {SETTING_KEY}: off",
    )
