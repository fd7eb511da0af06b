"""OpenSpliceAI checkpoints (plain PyTorch state dicts, `*.pt`) as errorseq base models.

OpenSpliceAI (Chao et al. 2025, GPL-3.0) retrains SpliceAI's network per species and publishes
each model as a `state_dict`. What such a file holds, read from the tensors (and checked against
OpenSpliceAI's own model class): `initial_conv` (C, 4, 1) lifts one-hot DNA (A, C, G, T) to C
channels (32), `initial_skip.conv` (C, C, 1) starts the skip sum, then `residual_units`: residual
units (BatchNorm → LeakyReLU(0.1) → dilated conv, twice, added to the unit's input; keys
`batchnorm1/2`, `conv1/2`) with a 1-nt skip convolution (`conv`) after every 4th unit, and
`final_conv` (3, C, 1) followed by a softmax over [neither, acceptor, donor]. The skip sum is
cropped by half the context at each end before `final_conv`.

The number of residual units tells the flank, as in SpliceAI: groups of four units with kernel
width and dilation (11, 1), (11, 4), (21, 10), (41, 25); 4 units → 80 nt of context, 8 → 400,
12 → 2,000, 16 → 10,000. Every kernel width is checked against that table; a dilation is not
stored in the file, so it comes from the table.

Files load with `torch.load(weights_only=True)`: no code in them can run. Before that, the zip
archive's entry sizes are checked against the file (file_headers.py); then each tensor's shape
against the bytes behind it, every name, shape and dtype against the architecture's arithmetic
(`expected_shapes`) and every value for NaN (calling/tensor_checks.py), all before the model is
built: a 2 KB file claiming 10^6 channels is refused, never allocated.
"""

from __future__ import annotations

from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from workflow_scripts.calling.tensor_checks import check_finite, check_fits, checked_storage
from workflow_scripts.errors import InputError
from workflow_scripts.file_headers import zip_entries

UNIT_GROUPS = ((11, 1), (11, 4), (21, 10), (41, 25))  # (kernel width, dilation) of each group of 4 units
UNITS_PER_GROUP = 4
LEAK = 0.1
INPUT_CHANNELS, OUTPUT_CHANNELS = 4, 3
FAMILY = "openspliceai"


def unit_shapes(count: int) -> list[tuple[int, int]]:
    """(kernel width, dilation) of each of `count` residual units."""
    return [UNIT_GROUPS[index // UNITS_PER_GROUP] for index in range(count)]


def context_of(count: int) -> int:
    """Total context (both sides) of a model with `count` residual units."""
    return 2 * sum(dilation * (width - 1) for width, dilation in unit_shapes(count))


class ResidualUnit(nn.Module):
    def __init__(self, channels: int, width: int, dilation: int):
        super().__init__()
        padding = (width - 1) * dilation // 2
        self.batchnorm1 = nn.BatchNorm1d(channels)
        self.batchnorm2 = nn.BatchNorm1d(channels)
        self.conv1 = nn.Conv1d(channels, channels, width, dilation=dilation, padding=padding)
        self.conv2 = nn.Conv1d(channels, channels, width, dilation=dilation, padding=padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        inner = self.conv1(F.leaky_relu(self.batchnorm1(x), LEAK))
        return x + self.conv2(F.leaky_relu(self.batchnorm2(inner), LEAK))


class SkipConv(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.conv = nn.Conv1d(channels, channels, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


class OpenSpliceAIModel(nn.Module):
    """One checkpoint as a torch module: (batch, 4, flank_left + n + flank_right) → (batch, 3, n)."""

    family = FAMILY

    def __init__(self, channels: int, units: int, source: str = ""):
        super().__init__()
        self.source = source
        self.initial_conv = nn.Conv1d(INPUT_CHANNELS, channels, 1)
        self.initial_skip = SkipConv(channels)
        layers: list[nn.Module] = []
        for index, (width, dilation) in enumerate(unit_shapes(units), 1):
            layers.append(ResidualUnit(channels, width, dilation))
            if index % UNITS_PER_GROUP == 0:
                layers.append(SkipConv(channels))
        self.residual_units = nn.ModuleList(layers)
        self.final_conv = nn.Conv1d(channels, OUTPUT_CHANNELS, 1)
        self.flank_left = self.flank_right = context_of(units) // 2
        self.eval()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.initial_conv(x)
        skip = self.initial_skip(x)
        for layer in self.residual_units:
            if isinstance(layer, SkipConv):
                skip = skip + layer(x)
            else:
                x = layer(x)
        end = skip.shape[2] - self.flank_right
        cropped = skip[:, :, self.flank_left : end]
        with torch.autocast(x.device.type, enabled=False):  # logits and probabilities in fp32
            return torch.softmax(self.final_conv(cropped.float()), dim=1)


def read_state_dict(path: Path) -> dict[str, torch.Tensor]:
    """The state dict, its archive's sizes checked before torch reads it and each tensor's
    shape against its storage after."""
    zip_entries(path, str(path))
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # torch raises UnpicklingError, RuntimeError or OSError alike
        reason = str(error).strip().splitlines()[0][:160] if str(error).strip() else type(error).__name__
        raise InputError(
            path, "file", f"not a PyTorch state dict readable with weights_only=True ({reason})"
        ) from None
    if not isinstance(state, dict) or not all(isinstance(value, torch.Tensor) for value in state.values()):
        raise InputError(path, "file", "not a plain state dict of tensors (an OpenSpliceAI model_*.pt)")
    checked_storage(state, path)
    return state


def expected_shapes(channels: int, units: int) -> dict[str, tuple[tuple[int, ...], torch.dtype]]:
    """{name: (shape, dtype)} of OpenSpliceAIModel(channels, units)'s state dict, by arithmetic
    (tests/unit/test_rescorer_validation.py checks it against the module's own)."""
    c, f32 = channels, torch.float32

    def conv(prefix: str, out: int, inp: int, width: int) -> dict:
        return {f"{prefix}.weight": ((out, inp, width), f32), f"{prefix}.bias": ((out,), f32)}

    def norm(prefix: str) -> dict:
        parts = {
            f"{prefix}.{name}": ((c,), f32) for name in ("weight", "bias", "running_mean", "running_var")
        }
        return {**parts, f"{prefix}.num_batches_tracked": ((), torch.int64)}

    shapes = {**conv("initial_conv", c, INPUT_CHANNELS, 1), **conv("initial_skip.conv", c, c, 1)}
    layer = 0
    for index, (width, _) in enumerate(unit_shapes(units), 1):
        unit = f"residual_units.{layer}"
        shapes |= norm(f"{unit}.batchnorm1") | norm(f"{unit}.batchnorm2")
        shapes |= conv(f"{unit}.conv1", c, c, width) | conv(f"{unit}.conv2", c, c, width)
        layer += 1
        if index % UNITS_PER_GROUP == 0:
            shapes |= conv(f"residual_units.{layer}.conv", c, c, 1)
            layer += 1
    return shapes | conv("final_conv", OUTPUT_CHANNELS, c, 1)


def units_in(state: dict[str, torch.Tensor], path: Path) -> int:
    """Residual units named in the state dict (entries with conv1), checked against the layout."""
    entries = {key.split(".")[1] for key in state if key.startswith("residual_units.")}
    if not all(entry.isdigit() for entry in entries):
        raise InputError(path, "residual_units", "entries must be numbered")
    units = sum(f"residual_units.{entry}.conv1.weight" in state for entry in entries)
    if units == 0 or units % UNITS_PER_GROUP or units > UNITS_PER_GROUP * len(UNIT_GROUPS):
        known = ", ".join(str(UNITS_PER_GROUP * n) for n in range(1, len(UNIT_GROUPS) + 1))
        raise InputError(path, "residual_units", f"{units} residual units; OpenSpliceAI models have {known}")
    return units


def load_openspliceai(path: str | Path) -> OpenSpliceAIModel:
    """One checkpoint, every tensor's name and shape checked against the model its size implies."""
    path = Path(path)
    state = read_state_dict(path)
    first = state.get("initial_conv.weight")
    if first is None or first.dim() != 3:
        raise InputError(
            path, "initial_conv.weight", "missing: not an OpenSpliceAI (SpliceAI-family) state dict"
        )
    channels, units = int(first.shape[0]), units_in(state, path)
    check_fits(state, expected_shapes(channels, units), path)
    check_finite(state, path)
    model = OpenSpliceAIModel(channels, units, str(path))
    model.load_state_dict(
        {key: value.float() if value.is_floating_point() else value for key, value in state.items()}
    )
    return model.eval()
