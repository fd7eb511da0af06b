"""The SpliceAI-family network as `train_base` trains it: OpenSpliceAI's layout (calling/openspliceai.py,
the same state-dict keys), returning logits, built from scratch for a flank of 80, 400, 2,000 or
10,000 nt, from an OpenSpliceAI `.pt` or from a SpliceAI Keras `.h5`.

A Keras SpliceAI file has the same layers in the same wiring; two things differ from OpenSpliceAI's
module, which the exported state dict is run by: SpliceAI's residual units use ReLU (OpenSpliceAI
LeakyReLU 0.1) and its batch norms epsilon 1e-3 (PyTorch 1e-5). A `.h5` start therefore takes the
weights, not the exact function: the network trains with OpenSpliceAI's activation from the first
step (`NetworkSpec.leak`/`eps` exist so a test can check the weight mapping against the Keras port).

Each residual unit's output is cut to the positions later layers still read (`BaseNetwork.forward`):
the core's logits are unchanged, the widest units run on less than the whole input (on D.
melanogaster chr4's blocks, flank 10,000: ~14% less CPU per training step).

Batch norms (`batch_norm`): `batch` normalises by each training batch's statistics (over the
positions each unit computes) and updates the running ones, as OpenSpliceAI's transfer does on its
windows; `frozen` keeps every batch norm in eval mode while training (the start's running
statistics, never updated; scale and shift still train).

Which units train: `trainable_units` of the schedule (0 = all, n = the last n residual units and
what follows them: the skip convolutions after them and the output convolution). A frozen unit's
parameters get no gradient and its batch norms stay in eval mode (running statistics neither used
from the batch nor updated), so it is unchanged bit for bit.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from workflow_scripts.calling.keras_h5 import read_keras_model
from workflow_scripts.calling.model_files import KERAS, file_family
from workflow_scripts.calling.openspliceai import (
    INPUT_CHANNELS,
    LEAK,
    OUTPUT_CHANNELS,
    UNIT_GROUPS,
    UNITS_PER_GROUP,
    OpenSpliceAIModel,
    ResidualUnit,
    SkipConv,
    context_of,
    load_openspliceai,
    unit_shapes,
)
from workflow_scripts.errors import InputError

CONTEXTS = {context_of(UNITS_PER_GROUP * n): UNITS_PER_GROUP * n for n in range(1, len(UNIT_GROUPS) + 1)}
CHANNELS = 32


def units_for(context: int) -> int:
    if context not in CONTEXTS:
        raise InputError("config", "train_base.context", f"{context}: one of {sorted(CONTEXTS)}")
    return CONTEXTS[context]


class LeakyUnit(ResidualUnit):
    """A residual unit whose activation slope can be set (SpliceAI's Keras files: ReLU, 0)."""

    def __init__(self, channels: int, width: int, dilation: int, leak: float, eps: float):
        super().__init__(channels, width, dilation)
        self.leak = leak
        self.batchnorm1.eps = self.batchnorm2.eps = eps

    @property
    def reach(self) -> int:
        """Positions each side of an output that it reads: the two convolutions' half-widths."""
        return sum((conv.kernel_size[0] - 1) // 2 * conv.dilation[0] for conv in (self.conv1, self.conv2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        inner = self.conv1(F.leaky_relu(self.batchnorm1(x), self.leak))
        return x + self.conv2(F.leaky_relu(self.batchnorm2(inner), self.leak))


def core_of(x: torch.Tensor, left: int, right: int) -> torch.Tensor:
    """x less `left` positions at the start and `right` at the end."""
    return x[:, :, left : x.shape[2] - right]


def cut_spans(
    x: torch.Tensor, spans: tuple[int, ...], left: int, right: int
) -> tuple[torch.Tensor, tuple[int, ...]]:
    """Each span of x's positions (blocks joined end to end) less `left` at its start and `right`
    at its end, joined again; with one span, `core_of`."""
    if len(spans) == 1:
        return core_of(x, left, right), (spans[0] - left - right,)
    pieces, offset = [], 0
    for span in spans:
        pieces.append(x[:, :, offset + left : offset + span - right])
        offset += span
    return torch.cat(pieces, dim=2), tuple(span - left - right for span in spans)


class BaseNetwork(OpenSpliceAIModel):
    """OpenSpliceAIModel's modules and keys; forward gives logits (batch, 3, n) for an input of
    (batch, 4, n + context). `blocks` (the residual units and skips) are FSDP's units."""

    def __init__(self, units: int, channels: int = CHANNELS, leak: float = LEAK, eps: float = 1e-5):
        super().__init__(channels, units)
        layers: list[nn.Module] = []
        self.cuts: list[int] = []  # positions each layer's output loses on each side (skips: 0)
        for index, (width, dilation) in enumerate(unit_shapes(units), 1):
            layers.append(unit := LeakyUnit(channels, width, dilation, leak, eps))
            self.cuts.append(unit.reach)
            if index % UNITS_PER_GROUP == 0:
                layers.append(SkipConv(channels))
                self.cuts.append(0)
        self.residual_units = nn.ModuleList(layers)
        self.units = units
        self.context = context_of(units)
        self.trainable = 0  # 0: every unit
        self.norms_frozen = False  # True: every batch norm in eval mode, training included
        self.train()

    @property
    def blocks(self) -> nn.ModuleList:
        return self.residual_units

    def forward(self, x: torch.Tensor, lengths: tuple[int, ...] | None = None) -> torch.Tensor:
        """Each residual unit's output is cut to the positions a later unit or the skip still
        reads (its half-width less on each side): the flank shrinks as it is used up, so the
        widest units run on the core plus what is left of the flank, not on the whole input. The
        core's logits are those of the uncut network; in training mode the batch norms' batch
        statistics are over the positions each unit computes (OpenSpliceAI's: the whole input).

        `lengths`: x is one packed row (1, 4, Σ lengths) of blocks joined end to end; every cut
        applies at each block's ends, so a kept position never reads another block, and the
        output is the blocks' cores joined (1, 3, Σ (length − context))."""
        spans = (x.shape[2],) if lengths is None else tuple(lengths)
        x = self.initial_conv(x)
        margin = self.flank_left  # positions each side of the core that x still holds
        right = self.flank_right - self.flank_left
        skip = self.initial_skip(cut_spans(x, spans, margin, margin + right)[0])
        for layer, cut in zip(self.residual_units, self.cuts, strict=True):
            if isinstance(layer, SkipConv):
                skip = skip + layer(cut_spans(x, spans, margin, margin + right)[0])
            else:
                x, spans = cut_spans(layer(x), spans, cut, cut)
                margin -= cut
        return self.final_conv(skip)

    # ---- which units train ------------------------------------------------------------------
    def frozen_modules(self, trainable: int) -> list[nn.Module]:
        """The modules before the last `trainable` residual units (0: none frozen)."""
        if trainable <= 0 or trainable >= self.units:
            return []
        first_trained = self.units - trainable  # index of the first trained unit, 0-based
        frozen: list[nn.Module] = [self.initial_conv, self.initial_skip]
        seen = 0
        for layer in self.residual_units:
            if isinstance(layer, SkipConv):
                if seen <= first_trained:  # this skip reads a frozen unit's output only
                    frozen.append(layer)
                continue
            if seen >= first_trained:
                break
            frozen.append(layer)
            seen += 1
        return frozen

    def set_trainable(self, trainable: int) -> None:
        """Freeze all but the last `trainable` units (0: all train); requires_grad and BN mode."""
        self.trainable = trainable
        frozen = {id(p) for module in self.frozen_modules(trainable) for p in module.parameters()}
        for parameter in self.parameters():
            parameter.requires_grad_(id(parameter) not in frozen)
        self.train(self.training)

    def freeze_norms(self, frozen: bool) -> None:
        """train_base.batch_norm: frozen → every batch norm normalises by its running statistics
        in training too and never updates them (its scale and shift still get gradients)."""
        self.norms_frozen = frozen
        self.train(self.training)

    def train(self, mode: bool = True) -> BaseNetwork:
        super().train(mode)
        for module in self.frozen_modules(getattr(self, "trainable", 0)):
            module.eval()  # frozen batch norms keep their running statistics
        if getattr(self, "norms_frozen", False):
            for module in self.modules():
                if isinstance(module, nn.BatchNorm1d):
                    module.eval()
        return self


@dataclass(frozen=True)
class Start:
    """Where the weights come from: `kind` scratch | openspliceai | keras-spliceai."""

    kind: str
    path: str | None
    notes: tuple[str, ...] = ()


def build_network(context: int, init: str | None, seed: int) -> tuple[BaseNetwork, Start]:
    """A network for `context` (80/400/2000/10000): random (seeded) where `init` is None, else the
    weights of the .pt or .h5 file `init` (its flank cropped by the data, never the network's)."""
    units = units_for(context)
    torch.manual_seed(seed)
    network = BaseNetwork(units)
    if init is None:
        return network, Start("scratch", None)
    path = Path(init)
    if file_family(path) == KERAS:
        state, notes = keras_state_dict(path)
        kind = KERAS
    else:
        state, notes = load_openspliceai(path).state_dict(), ()
        kind = "openspliceai"
    found = sum(key.endswith("conv1.weight") for key in state)
    if found != units:
        raise InputError(
            path, "train_base.context", f"{found} residual units (flank {context_of(found)}), not {context}"
        )
    channels = state["initial_conv.weight"].shape[0]
    if channels != CHANNELS:
        network = BaseNetwork(units, int(channels))
    network.load_state_dict(state)
    return network, Start(kind, str(path), notes)


def keras_state_dict(path: Path, leak_note: bool = True) -> tuple[dict[str, torch.Tensor], tuple[str, ...]]:
    """A SpliceAI Keras model's weights under OpenSpliceAI's keys: stem → initial_conv, the 1-nt
    convolution of the stem → initial_skip, each unit's (BN, conv) × 2, the skip convolution after
    every 4th unit, the softmax layer → final_conv."""
    keras = read_keras_model(path)
    order = {layer.name: index for index, layer in enumerate(keras.layers)}
    convs = [layer for layer in keras.layers if layer.kind == "Conv1D"]
    norms = [layer for layer in keras.layers if layer.kind == "BatchNormalization"]
    wide = [layer for layer in convs if layer.config["kernel_size"][0] > 1]
    output = keras.output
    stem = next((c for c in convs if c.inputs == (keras.input_name,)), None)
    skips = sorted(
        (c for c in convs if c.config["kernel_size"][0] == 1 and c is not output and c is not stem),
        key=lambda c: order[c.inputs[0]],
    )
    units = len(wide) // 2
    if stem is None or len(norms) != 2 * units or len(skips) != 1 + units // UNITS_PER_GROUP:
        raise InputError(path, "layers", "not SpliceAI's wiring (stem, units of BN+conv ×2, skips)")
    for index, (width, dilation) in enumerate(unit_shapes(units)):
        for conv in wide[2 * index : 2 * index + 2]:
            found = (conv.config["kernel_size"][0], conv.config["dilation_rate"][0])
            if found != (width, dilation):
                raise InputError(
                    path, conv.name, f"kernel/dilation {found}, SpliceAI has {(width, dilation)}"
                )
    state: dict[str, torch.Tensor] = {}
    put_conv(state, "initial_conv", stem)
    put_conv(state, "initial_skip.conv", skips[0])
    position = 0
    for index in range(units):
        for half in (1, 2):
            put_norm(state, f"residual_units.{position}.batchnorm{half}", norms[2 * index + half - 1])
            put_conv(state, f"residual_units.{position}.conv{half}", wide[2 * index + half - 1])
        position += 1
        if (index + 1) % UNITS_PER_GROUP == 0:
            put_conv(state, f"residual_units.{position}.conv", skips[(index + 1) // UNITS_PER_GROUP])
            position += 1
    put_conv(state, "final_conv", output)
    notes = (
        "start from a SpliceAI Keras .h5: trained with OpenSpliceAI's LeakyReLU(0.1) and batch-norm "
        "eps 1e-5 (SpliceAI: ReLU, eps 1e-3), so the start's scores are not SpliceAI's exactly",
    )
    return state, notes if leak_note else ()


def put_conv(state: dict, key: str, layer) -> None:
    state[f"{key}.weight"] = torch.from_numpy(layer.weights["kernel"]).permute(2, 1, 0).contiguous()
    state[f"{key}.bias"] = torch.from_numpy(layer.weights["bias"]).clone()


def put_norm(state: dict, key: str, layer) -> None:
    for ours, theirs in (
        ("weight", "gamma"),
        ("bias", "beta"),
        ("running_mean", "moving_mean"),
        ("running_var", "moving_variance"),
    ):
        state[f"{key}.{ours}"] = torch.from_numpy(layer.weights[theirs]).clone()
    state[f"{key}.num_batches_tracked"] = torch.tensor(0)


def exported_state(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """OpenSpliceAI's file: the state dict's keys as its own SpliceAI class names them, fp32."""
    return {key: value.float() if value.is_floating_point() else value for key, value in state.items()}


__all__ = ["INPUT_CHANNELS", "OUTPUT_CHANNELS", "BaseNetwork", "Start", "build_network", "exported_state"]
