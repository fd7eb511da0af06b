"""Read a Keras 2 functional model saved as .h5 (as SpliceAI ships its models) with h5py alone.

A Keras `model.save()` file holds the layer graph as JSON in the root attribute `model_config`
(each layer: class_name, config, inbound_nodes) and the weights under `model_weights/<layer>/`,
listed by the layer group's `weight_names` attribute (e.g. `conv1d_3/kernel:0`). Conv1D kernels
are stored (kernel_size, in_channels, filters); BatchNormalization keeps gamma, beta,
moving_mean and moving_variance of shape (channels,).

`read_keras_model` returns the layers in an order where every layer follows its inputs, with
their weights, after checking every weight's shape against what the graph implies (and, before a
weight is read, its dtype and its size against the bytes the file stores for it: `checked_dataset`).
Any problem is one `InputError` naming the file and the layer (and the weight) at fault.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import h5py
import numpy as np

from workflow_scripts.errors import InputError
from workflow_scripts.file_headers import DEFLATE_RATIO

SUPPORTED_LAYERS = ("InputLayer", "Conv1D", "BatchNormalization", "Activation", "Add", "Cropping1D")
ACTIVATIONS = ("linear", "relu", "softmax", "sigmoid", "tanh")
WEIGHT_ROLES = {
    "Conv1D": ("kernel", "bias"),
    "BatchNormalization": ("gamma", "beta", "moving_mean", "moving_variance"),
}


@dataclass
class KerasLayer:
    name: str
    kind: str
    config: dict
    inputs: tuple[str, ...]
    weights: dict[str, np.ndarray] = field(default_factory=dict)
    channels: int = 0  # output channels, set by check_shapes
    crop: tuple[int, int] = (0, 0)  # positions lost at (start, end) from the model input to here


@dataclass
class KerasModel:
    path: Path
    layers: list[KerasLayer]  # inputs before the layers that use them
    input_name: str
    output_name: str

    @property
    def output(self) -> KerasLayer:
        return self.layers[-1]


def read_keras_model(path: str | Path) -> KerasModel:
    path = Path(path)
    with open_h5(path) as h5:
        config = model_config(h5, path)
        layers, input_name, output_name = parse_graph(config, path)
        root = h5["model_weights"] if "model_weights" in h5 else h5
        for layer in layers:
            layer.weights = read_weights(root, layer, path)
    model = KerasModel(path, layers, input_name, output_name)
    check_shapes(model)
    return model


def open_h5(path: Path) -> h5py.File:
    if not path.is_file():
        raise InputError(path, "file", "not found")
    try:
        return h5py.File(path, "r")
    except OSError as error:
        raise InputError(path, "file", f"not an HDF5 file ({error}); expected a Keras .h5 model") from None


def model_config(h5: h5py.File, path: Path) -> dict:
    text = h5.attrs.get("model_config")
    if text is None:
        raise InputError(
            path,
            "model_config",
            "no Keras model config in this file (weights-only file, or not "
            "a Keras model?); give the .h5 that model.save() writes",
        )
    try:
        config = json.loads(text.decode() if isinstance(text, bytes) else text)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InputError(path, "model_config", f"not valid JSON ({error}); the file is damaged") from None
    if not isinstance(config, dict) or config.get("class_name") not in ("Model", "Functional"):
        found = config.get("class_name") if isinstance(config, dict) else type(config).__name__
        raise InputError(path, "model_config", f"class {found!r}; expected a Keras functional Model")
    if not isinstance(config.get("config"), dict):
        raise InputError(path, "model_config", "no 'config' object under the model; the file is damaged")
    return config["config"]


def parse_graph(config: dict, path: Path) -> tuple[list[KerasLayer], str, str]:
    inputs, outputs = config.get("input_layers", []), config.get("output_layers", [])
    if len(inputs) != 1 or len(outputs) != 1:
        raise InputError(
            path, "model_config", f"{len(inputs)} inputs and {len(outputs)} outputs; expected one of each"
        )
    layers = {}
    for entry in config["layers"]:
        layer = KerasLayer(entry["name"], entry["class_name"], entry["config"], inbound_names(entry, path))
        if layer.kind not in SUPPORTED_LAYERS:
            raise InputError(
                path,
                f"layer {layer.name}",
                f"{layer.kind} is not a SpliceAI layer (supported: {', '.join(SUPPORTED_LAYERS)})",
            )
        layers[layer.name] = layer
    ordered = topological_order(layers, outputs[0][0], path)
    return ordered, inputs[0][0], outputs[0][0]


def inbound_names(entry: dict, path: Path) -> tuple[str, ...]:
    nodes = entry.get("inbound_nodes") or []
    if len(nodes) > 1:
        raise InputError(
            path, f"layer {entry['name']}", "is applied more than once (shared layers are not supported)"
        )
    if not nodes:
        return ()
    try:
        return tuple(str(tensor[0]) for tensor in nodes[0])
    except (TypeError, KeyError, IndexError):
        raise InputError(
            path,
            f"layer {entry['name']}",
            "inbound_nodes in an unknown format; expected a Keras 2 (.h5, model.save) model",
        ) from None


def topological_order(layers: dict[str, KerasLayer], output: str, path: Path) -> list[KerasLayer]:
    """The layers the output depends on, each after its inputs (depth-first, no recursion)."""
    order, done, stack = [], set(), [(output, False)]
    while stack:
        name, expanded = stack.pop()
        if name in done:
            continue
        if name not in layers:
            raise InputError(path, f"layer {name}", "used as an input but not defined in model_config")
        if expanded:
            done.add(name)
            order.append(layers[name])
            continue
        stack.append((name, True))
        stack.extend((source, False) for source in reversed(layers[name].inputs) if source not in done)
    return order


def read_weights(root: h5py.Group, layer: KerasLayer, path: Path) -> dict[str, np.ndarray]:
    roles = WEIGHT_ROLES.get(layer.kind, ())
    if not roles:
        return {}
    if layer.name not in root:
        raise InputError(path, f"layer {layer.name}", "has no weights in model_weights")
    group = root[layer.name]
    found = {}
    for name in group.attrs.get("weight_names", []):
        name = name.decode() if isinstance(name, bytes) else str(name)
        role = name.rsplit("/", 1)[-1].split(":")[0]
        found[role] = np.asarray(
            checked_dataset(group, name, f"layer {layer.name} weight {role}", path), dtype=np.float32
        )
    return {role: found[role] for role in roles if role in found}


def checked_dataset(group: h5py.Group, name: str, field: str, path: Path) -> h5py.Dataset:
    """A weight's dataset, its header checked before it is read: floating point, and no more
    values than the file stores for it (a dataset whose storage was never written reads as its
    fill value: a 2 KB file can claim terabytes; compressed, at most DEFLATE_RATIO : 1)."""
    dataset = group.get(name)
    if not isinstance(dataset, h5py.Dataset):
        raise InputError(path, field, "not a dataset of numbers")
    if dataset.dtype.kind != "f":
        raise InputError(path, field, f"dtype {dataset.dtype}: want floating-point weights")
    stored = dataset.id.get_storage_size()
    if dataset.nbytes > stored * (DEFLATE_RATIO if dataset.compression else 1):
        raise InputError(
            path,
            field,
            f"its header claims {dataset.size:,} values ({dataset.nbytes:,} bytes), the file stores "
            f"{stored:,} bytes for it: refused unread",
        )
    return dataset


def check_shapes(model: KerasModel) -> None:
    """Propagate channels and cropping through the graph; every weight must fit its layer."""
    by_name = {layer.name: layer for layer in model.layers}
    for layer in model.layers:
        sources = [by_name[name] for name in layer.inputs]
        if layer.kind == "InputLayer":
            shape = layer.config.get("batch_input_shape") or layer.config.get("batch_shape") or [None]
            layer.channels = int(shape[-1] or 0)
        elif layer.kind == "Add":
            check_add(model.path, layer, sources)
        else:
            layer.channels, layer.crop = sources[0].channels, sources[0].crop
        if layer.kind == "Conv1D":
            check_conv(model.path, layer, sources[0].channels)
        elif layer.kind == "BatchNormalization":
            check_batch_norm(model.path, layer)
        if layer.config.get("activation", "linear") not in ACTIVATIONS:
            raise InputError(
                model.path,
                f"layer {layer.name}",
                f"activation {layer.config['activation']!r} is not supported ({', '.join(ACTIVATIONS)})",
            )
        if layer.kind == "Cropping1D":
            start, end = layer.config["cropping"]
            layer.crop = (layer.crop[0] + int(start), layer.crop[1] + int(end))


def check_add(path: Path, layer: KerasLayer, sources: list[KerasLayer]) -> None:
    shapes = {(source.channels, source.crop) for source in sources}
    if len(shapes) != 1:
        described = ", ".join(f"{s.name}: {s.channels} channels, cropped {s.crop}" for s in sources)
        raise InputError(path, f"layer {layer.name}", f"adds tensors of different shapes ({described})")
    layer.channels, layer.crop = shapes.pop()


def check_conv(path: Path, layer: KerasLayer, in_channels: int) -> None:
    config = layer.config
    (kernel_size,), (dilation,) = config["kernel_size"], config["dilation_rate"]
    if tuple(config.get("strides", [1])) != (1,) or config["padding"] not in ("same", "valid"):
        raise InputError(
            path,
            f"layer {layer.name}",
            f"strides {config.get('strides')} padding {config['padding']!r}: "
            "only stride 1 with 'same' or 'valid' padding is supported",
        )
    if config["padding"] == "valid":
        lost = (kernel_size - 1) * dilation
        layer.crop = (layer.crop[0] + lost // 2, layer.crop[1] + lost - lost // 2)
    layer.channels = int(config["filters"])
    expected: dict[str, tuple[int, ...]] = {
        "kernel": (kernel_size, in_channels, layer.channels),
        "bias": (layer.channels,),
    }
    if not config.get("use_bias", True):
        expected.pop("bias")
    check_weights(path, layer, expected)


def check_batch_norm(path: Path, layer: KerasLayer) -> None:
    if layer.config.get("axis", -1) not in (-1, 2, [-1], [2]):
        raise InputError(
            path, f"layer {layer.name}", f"axis {layer.config['axis']}: only the channel axis is supported"
        )
    expected: dict[str, tuple[int, ...]] = {
        role: (layer.channels,) for role in ("moving_mean", "moving_variance")
    }
    if layer.config.get("scale", True):
        expected["gamma"] = (layer.channels,)
    if layer.config.get("center", True):
        expected["beta"] = (layer.channels,)
    check_weights(path, layer, expected)


def check_weights(path: Path, layer: KerasLayer, expected: dict[str, tuple[int, ...]]) -> None:
    for role, shape in expected.items():
        if role not in layer.weights:
            raise InputError(path, f"layer {layer.name} weight {role}", "missing from model_weights")
        actual = tuple(layer.weights[role].shape)
        if actual != shape:
            raise InputError(
                path,
                f"layer {layer.name} weight {role}",
                f"shape {actual}, but the model config implies {shape}",
            )
        bad = int(np.size(layer.weights[role]) - np.isfinite(layer.weights[role]).sum())
        if bad:
            raise InputError(
                path,
                f"layer {layer.name} weight {role}",
                f"{bad:,} values are NaN or infinite; the file is damaged (every score would be NaN)",
            )
