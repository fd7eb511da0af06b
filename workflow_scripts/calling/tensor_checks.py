"""Tensors read from a weights file, checked before a model is built from them or holds them.

Every family of weights errorseq loads goes through here (OpenSpliceAI .pt, calling/openspliceai.py;
a re-scorer's fold models, sites/rescorer_files.py and evaluation/predict.py); Keras .h5 weights
are checked layer by layer in calling/keras_h5.py. Each refusal is one InputError naming the file
and the tensor:

    checked_storage   a tensor claims no more values than the bytes behind it (a view with stride
                      0 over one stored number can claim 10^12, and the model of that shape would
                      be built before anything failed)
    check_finite      no NaN or infinite value (every score would be NaN, blamed on a later table)
    check_fits        the tensors a model expects, by name, shape and kind of dtype (a float
                      parameter from integers would be cast silently), compared before the model
                      is built or loaded: expected shapes come from the architecture's arithmetic
                      or from the model built on the meta device, which allocates nothing
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import torch

from workflow_scripts.errors import InputError


def dtype_kind(dtype: torch.dtype) -> str:
    if dtype.is_floating_point:
        return "floating point"
    if dtype.is_complex:
        return "complex"
    return "true or false" if dtype == torch.bool else "integer"


def checked_storage(state: Mapping[str, torch.Tensor], source: str | Path) -> None:
    """Each tensor's values fit in the storage it was read with."""
    for name, tensor in state.items():
        held = tensor.untyped_storage().nbytes() - tensor.storage_offset() * tensor.element_size()
        if tensor.numel() * tensor.element_size() > max(held, 0):
            raise InputError(
                source,
                name,
                f"shape {tuple(tensor.shape)} claims {tensor.numel():,} values over "
                f"{max(held, 0) // max(tensor.element_size(), 1):,} stored: refused before any model is built",
            )


def check_finite(state: Mapping[str, torch.Tensor], source: str | Path) -> None:
    for name, tensor in state.items():
        if tensor.is_floating_point() and tensor.numel():
            bad = int(tensor.numel() - torch.isfinite(tensor).sum())
            if bad:
                raise InputError(
                    source,
                    name,
                    f"{bad:,} values are NaN or infinite; the file is damaged (every score would be NaN)",
                )


def check_fits(
    state: Mapping[str, torch.Tensor],
    expected: Mapping[str, tuple[tuple[int, ...], torch.dtype]],
    source: str | Path,
    model: str | None = None,
) -> None:
    """The tensors `expected` names ({name: (shape, dtype)}), no other, each of its shape and of
    its kind of dtype. `model`: the model's description; every refusal then names the field
    "model" and says it does not fit (else the tensor, "for this architecture")."""

    def refuse(name: str, what: str) -> InputError:
        if model is None:
            return InputError(source, name, f"{what} for this architecture")
        return InputError(source, "model", f"does not fit the model {model} ({what})")

    missing, extra = sorted(set(expected) - set(state)), sorted(set(state) - set(expected))
    if missing or extra:
        what = f"missing {missing[0]}" if missing else f"unexpected {extra[0]}"
        more = len(missing) + len(extra) - 1
        raise refuse("state dict", what + (f" (and {more} more)" if more else ""))
    for name, (shape, dtype) in expected.items():
        tensor = state[name]
        if tuple(tensor.shape) != tuple(shape):
            mismatch = "" if model is None else f"size mismatch for {name}: "
            raise refuse(name, f"{mismatch}shape {tuple(tensor.shape)}, expected {tuple(shape)}")
        if dtype_kind(tensor.dtype) != dtype_kind(dtype):
            found, wanted = (str(kind).removeprefix("torch.") for kind in (tensor.dtype, dtype))
            mismatch = "" if model is None else f"dtype of {name}: "
            raise refuse(name, f"{mismatch}dtype {found}, expected {dtype_kind(dtype)} ({wanted})")


def meta_shapes(build) -> dict[str, tuple[tuple[int, ...], torch.dtype]] | None:
    """{name: (shape, dtype)} of the state dict of the module `build()` makes, built on the meta
    device (no memory); None where the module cannot be built there."""
    try:
        with torch.device("meta"):
            module = build()
    except Exception:  # a backbone that needs real tensors to be built: the load checks instead
        return None
    return {name: (tuple(value.shape), value.dtype) for name, value in module.state_dict().items()}
