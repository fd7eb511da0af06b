"""SpliceAI-family splice-site models in PyTorch: Keras .h5 files (no TensorFlow) and OpenSpliceAI state dicts.

What the five SpliceAI-10k files (spliceai{1..5}.h5 in the `spliceai` package) hold, read from
their own layer graph and weight shapes (`describe` lists them):
- input: one-hot DNA, channels A, C, G, T in that order; N (and anything else) is all zeros;
- a 1-nt convolution to 32 channels, then 16 residual units, each
  BN → ReLU → dilated conv → BN → ReLU → dilated conv, added to the unit's input, with
  (kernel, dilation) = (11, 1) ×4, (11, 4) ×4, (21, 10) ×4, (41, 25) ×4, all 'same' padded;
- a skip path: 1-nt convolutions of the stem and of every 4th unit's output, summed;
- the sum cropped by 5,000 nt at each end (the 10,000 nt context: 5,000 on each side of every
  scored position), then a 1-nt convolution to 3 channels and a softmax over
  [neither, acceptor, donor].
The port does not hard-code that: it runs whatever graph of Conv1D, BatchNormalization,
Activation, Add and Cropping1D layers the file holds (SpliceAI-80nt/400nt/2k and retrained
descendants too), takes the context from the graph's cropping, and checks the result is a
splice-site model (4 input channels, 3 softmax outputs). An ensemble averages its models'
probabilities, as SpliceAI does. Files with the same bytes (OpenSpliceAI's arabidopsis rs11 and
rs14) are loaded and run once and counted as often as they are listed: the same mean, added in
the same order, one forward fewer.

OpenSpliceAI's retrained models (`.pt` state dicts) are built by calling/openspliceai.py; the
file's content, not its name, picks the reader (model_files.py).

Weights stay where the user keeps them (SpliceAI's models are CC BY-NC 4.0, OpenSpliceAI's
GPL-3.0): `weight_files` takes a directory of .h5 or .pt files or a list of files.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from workflow_scripts.calling.keras_h5 import KerasLayer, KerasModel, read_keras_model
from workflow_scripts.calling.model_files import KERAS, OPENSPLICEAI, file_family, weight_files
from workflow_scripts.calling.openspliceai import OpenSpliceAIModel, load_openspliceai
from workflow_scripts.errors import InputError
from workflow_scripts.io_utils import sha256_file

BASES = "ACGT"
CLASSES = ("neither", "acceptor", "donor")
ACCEPTOR, DONOR = CLASSES.index("acceptor"), CLASSES.index("donor")


class KerasConv1d(nn.Module):
    """Keras Conv1D (stride 1): 'same' pads (k-1)·d in total, the smaller half first."""

    def __init__(self, layer: KerasLayer):
        super().__init__()
        (kernel_size,), (dilation,) = layer.config["kernel_size"], layer.config["dilation_rate"]
        kernel = torch.from_numpy(layer.weights["kernel"]).permute(2, 1, 0)  # (k, in, out) → (out, in, k)
        self.conv = nn.Conv1d(
            kernel.shape[1], kernel.shape[0], kernel_size, dilation=dilation, bias="bias" in layer.weights
        )
        state = {"weight": kernel}
        if "bias" in layer.weights:
            state["bias"] = torch.from_numpy(layer.weights["bias"])
        self.conv.load_state_dict(state)
        total = (kernel_size - 1) * dilation if layer.config["padding"] == "same" else 0
        self.padding = (total // 2, total - total // 2)
        if self.padding[0] == self.padding[1]:
            self.conv.padding, self.padding = (self.padding[0],), (0, 0)
        self.activation = layer.config.get("activation", "linear")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if any(self.padding):
            x = F.pad(x, self.padding)
        if self.activation == "softmax":  # the output layer: logits and probabilities in fp32 under autocast
            with torch.autocast(x.device.type, enabled=False):
                return activate(self.conv(x.float()), self.activation)
        return activate(self.conv(x), self.activation)


def keras_batch_norm(layer: KerasLayer) -> nn.BatchNorm1d:
    """Keras BatchNormalization at inference: (x - moving_mean) / sqrt(moving_variance + eps) · gamma + beta."""
    weights = layer.weights
    norm = nn.BatchNorm1d(len(weights["moving_mean"]), eps=float(layer.config.get("epsilon", 1e-3)))
    state = norm.state_dict()  # gamma 1 and beta 0 where the layer has none (scale/center false)
    for ours, theirs in (
        ("running_mean", "moving_mean"),
        ("running_var", "moving_variance"),
        ("weight", "gamma"),
        ("bias", "beta"),
    ):
        if theirs in weights:
            state[ours] = torch.from_numpy(weights[theirs])
    norm.load_state_dict(state)
    return norm.eval()


def activate(x: torch.Tensor, name: str) -> torch.Tensor:
    if name == "relu":
        return torch.relu(x)
    if name == "softmax":
        return torch.softmax(x, dim=1)  # Keras' last axis = our channel axis
    if name == "sigmoid":
        return torch.sigmoid(x)
    if name == "tanh":
        return torch.tanh(x)
    return x


class SpliceAIModel(nn.Module):
    """One Keras model as a torch module: (batch, 4, flank_left + n + flank_right) → (batch, 3, n)."""

    family = KERAS

    def __init__(self, keras: KerasModel):
        super().__init__()
        check_splice_model(keras)
        self.source = str(keras.path)
        self.flank_left, self.flank_right = keras.output.crop
        self.steps = [(layer.name, layer.kind, layer.inputs, layer.config) for layer in keras.layers]
        self.blocks = nn.ModuleDict()
        for layer in keras.layers:
            if layer.kind == "Conv1D":
                self.blocks[layer.name] = KerasConv1d(layer)
            elif layer.kind == "BatchNormalization":
                self.blocks[layer.name] = keras_batch_norm(layer)
        self.last_use = last_uses(self.steps)
        self.eval()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        values: dict[str, torch.Tensor] = {}
        for index, (name, kind, inputs, config) in enumerate(self.steps):
            sources = [values[source] for source in inputs]
            values[name] = self.run_layer(name, kind, config, sources, x)
            for source in inputs:
                if self.last_use[source] == index:
                    del values[source]
        return values[self.steps[-1][0]]

    def run_layer(self, name, kind, config, sources, x):
        if kind == "InputLayer":
            return x
        if kind in ("Conv1D", "BatchNormalization"):
            return self.blocks[name](sources[0])
        if kind == "Activation":
            return activate(sources[0], config["activation"])
        if kind == "Add":
            return torch.stack(sources).sum(0) if len(sources) > 2 else sources[0] + sources[1]
        start, end = config["cropping"]  # Cropping1D
        return sources[0][:, :, start : sources[0].shape[2] - end]


def last_uses(steps) -> dict[str, int]:
    """Index of the last step reading each layer's output (the output itself: never freed)."""
    last = {steps[-1][0]: len(steps)}
    for index, (_, _, inputs, _) in enumerate(steps):
        for source in inputs:
            last[source] = max(index, last.get(source, -1))
    return last


def check_splice_model(keras: KerasModel) -> None:
    first = next(layer for layer in keras.layers if layer.name == keras.input_name)
    if first.channels != len(BASES):
        raise InputError(
            keras.path,
            f"layer {first.name} batch_input_shape",
            f"{first.channels} input channels; a SpliceAI model reads one-hot DNA (4 channels)",
        )
    output = keras.output
    if output.channels != len(CLASSES) or output.config.get("activation") != "softmax":
        raise InputError(
            keras.path,
            f"layer {output.name}",
            f"output has {output.channels} channels, activation {output.config.get('activation')!r}; "
            "a SpliceAI model ends in a softmax over 3 classes (neither, acceptor, donor)",
        )


BaseModel = SpliceAIModel | OpenSpliceAIModel


class SpliceAIEnsemble(nn.Module):
    """The mean of its models' probabilities; all models must share one context."""

    def __init__(self, models: list[BaseModel], order: list[int] | None = None, files: list | None = None):
        """`order`: the index in `models` of each listed file, `files` (a model listed twice, by
        two byte-identical files, is one module run once per forward); default one each."""
        super().__init__()
        families = {model.family for model in models}
        if len(families) != 1:
            raise InputError(models[-1].source, "family", f"an ensemble mixes {sorted(families)}")
        flanks = {(m.flank_left, m.flank_right) for m in models}
        if len(flanks) != 1:
            odd = next(
                m
                for m in models
                if (m.flank_left, m.flank_right) != (models[0].flank_left, models[0].flank_right)
            )
            raise InputError(
                odd.source,
                "context",
                f"flanks {odd.flank_left}+{odd.flank_right} nt differ from "
                f"{models[0].source}'s {models[0].flank_left}+{models[0].flank_right}",
            )
        self.members: list[BaseModel] = list(models)
        self.models = nn.ModuleList(models)
        self.order = list(range(len(models))) if order is None else list(order)
        self.files = [str(model.source) for model in models] if files is None else [str(f) for f in files]
        self.flank_left, self.flank_right = flanks.pop()
        # called with the input after each distinct model has run on it (progress inside a batch)
        self.after_model: Callable[[torch.Tensor], None] | None = None

    @property
    def family(self) -> str:
        return str(self.members[0].family)

    @property
    def sources(self) -> list[str]:
        """Every listed file, a byte-identical copy included."""
        return list(self.files)

    @property
    def count_text(self) -> str:
        """'5 models', or '5 models (4 distinct, each run once)' when files repeat a content."""
        listed, distinct = len(self.order), len(self.members)
        return f"{listed} models" + ("" if listed == distinct else f" ({distinct} distinct, each run once)")

    @property
    def context(self) -> int:
        return self.flank_left + self.flank_right

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        outputs: dict[int, torch.Tensor] = {}
        total: torch.Tensor | None = None
        for index in self.order:
            if index not in outputs:
                outputs[index] = self.members[index](x)
                if self.after_model is not None:
                    self.after_model(x)
            total = outputs[index] if total is None else total + outputs[index]
        assert total is not None
        return total / len(self.order)


def load_model(path: str | Path) -> BaseModel:
    """One model file of either family, told by its content."""
    if file_family(Path(path)) == OPENSPLICEAI:
        return load_openspliceai(path)
    return SpliceAIModel(read_keras_model(path))


def load_ensemble(spec: str | Path | list) -> SpliceAIEnsemble:
    """The ensemble of `spec`'s files (model_files.weight_files), each distinct content loaded once."""
    distinct: dict[str, int] = {}
    models: list[BaseModel] = []
    order = []
    files = weight_files(spec)
    for path in files:
        digest = sha256_file(path)
        if digest not in distinct:
            distinct[digest] = len(models)
            models.append(load_model(path))
        order.append(distinct[digest])
    return SpliceAIEnsemble(models, order, files)


def one_hot(codes: torch.Tensor) -> torch.Tensor:
    """uint8 ASCII bases (batch, length) → float32 (batch, 4, length); N and other bytes are zeros."""
    table = torch.zeros(256, len(BASES), dtype=torch.float32, device=codes.device)
    for channel, base in enumerate(BASES):
        table[ord(base), channel] = 1.0
        table[ord(base.lower()), channel] = 1.0
    return table[codes.long()].permute(0, 2, 1)


def describe(model: SpliceAIModel, keras: KerasModel) -> dict:
    """Architecture facts of one model, read from its graph (for humans and tests)."""
    kinds = {layer.name: layer for layer in keras.layers}
    convs = [layer for layer in keras.layers if layer.kind == "Conv1D"]
    wide = {layer.name for layer in convs if layer.config["kernel_size"][0] > 1}
    residual_adds = [layer for layer in keras.layers if layer.kind == "Add" and wide & set(layer.inputs)]
    return {
        "file": str(keras.path),
        "layers": len(keras.layers),
        "channels": sorted({layer.channels for layer in convs if layer is not keras.output}),
        "residual_units": len(residual_adds),
        "dilated_convolutions": [
            [kinds[name].config["kernel_size"][0], kinds[name].config["dilation_rate"][0]]
            for name in (layer.name for layer in convs)
            if name in wide
        ],
        "flanks": [model.flank_left, model.flank_right],
        "parameters": sum(p.numel() for p in model.parameters()),
    }
