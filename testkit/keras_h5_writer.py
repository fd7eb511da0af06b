"""SpliceAI-shaped Keras .h5 files with random weights, in the layout Keras 2 `model.save()` uses
(root attribute `model_config`, weights under `model_weights/<layer>/<layer>/<role>:0` listed by
`weight_names`): the tiny base model of the tests and of the genome-scale benchmark, which needs
neither TensorFlow nor the `spliceai` package. calling/keras_h5.py reads them like SpliceAI's own.
"""

from __future__ import annotations

import json
from pathlib import Path

import h5py
import numpy as np


def layer_entry(name, kind, inputs, **config):
    config = {"name": name, **config}
    return {
        "class_name": kind,
        "name": name,
        "config": config,
        "inbound_nodes": [[[source, 0, 0, {}] for source in inputs]] if inputs else [],
    }


def conv(name, source, filters, kernel=1, dilation=1, padding="valid", activation="linear"):
    return layer_entry(
        name,
        "Conv1D",
        [source],
        filters=filters,
        kernel_size=[kernel],
        dilation_rate=[dilation],
        padding=padding,
        activation=activation,
        strides=[1],
        use_bias=True,
    )


def spliceai_layers(units=((3, 1), (5, 2), (3, 4)), channels=8, group=2, out_channels=3, in_channels=4):
    """SpliceAI's wiring (stem, residual units, skip sums every `group` units, crop, softmax)."""
    crop = sum((kernel - 1) * dilation for kernel, dilation in units)
    layers = [
        layer_entry("input_1", "InputLayer", [], batch_input_shape=[None, None, in_channels]),
        conv("stem", "input_1", channels),
        conv("skip_0", "stem", channels),
    ]
    current, skip = "stem", "skip_0"
    for i, (kernel, dilation) in enumerate(units, start=1):
        a, b = f"u{i}_a", f"u{i}_b"
        layers += [
            layer_entry(f"{a}_bn", "BatchNormalization", [current], epsilon=1e-3, axis=-1),
            layer_entry(f"{a}_relu", "Activation", [f"{a}_bn"], activation="relu"),
            conv(f"{a}_conv", f"{a}_relu", channels, kernel, dilation, "same"),
            layer_entry(f"{b}_bn", "BatchNormalization", [f"{a}_conv"], epsilon=1e-3, axis=-1),
            layer_entry(f"{b}_relu", "Activation", [f"{b}_bn"], activation="relu"),
            conv(f"{b}_conv", f"{b}_relu", channels, kernel, dilation, "same"),
            layer_entry(f"u{i}_add", "Add", [f"{b}_conv", current]),
        ]
        current = f"u{i}_add"
        if i % group == 0 or i == len(units):
            layers += [
                conv(f"dense_{i}", current, channels),
                layer_entry(f"skip_{i}", "Add", [skip, f"dense_{i}"]),
            ]
            skip = f"skip_{i}"
    layers += [
        layer_entry("crop", "Cropping1D", [skip], cropping=[crop, crop]),
        conv("output", "crop", out_channels, activation="softmax"),
    ]
    return layers


def random_weights(layers, rng: np.random.Generator) -> dict[str, dict[str, np.ndarray]]:
    channels, weights = {}, {}
    for entry in layers:
        config, name = entry["config"], entry["name"]
        inputs = [node[0] for node in entry["inbound_nodes"][0]] if entry["inbound_nodes"] else []
        if entry["class_name"] == "InputLayer":
            channels[name] = config["batch_input_shape"][-1]
        elif entry["class_name"] == "Conv1D":
            fan_in = config["kernel_size"][0] * channels[inputs[0]]
            shape = (config["kernel_size"][0], channels[inputs[0]], config["filters"])
            weights[name] = {
                "kernel": rng.normal(0, 1.2 / np.sqrt(fan_in), shape),
                "bias": rng.normal(0, 0.1, config["filters"]),
            }
            channels[name] = config["filters"]
        else:
            channels[name] = channels[inputs[0]]
        if entry["class_name"] == "BatchNormalization":
            n = channels[name]
            weights[name] = {
                "gamma": rng.uniform(0.7, 1.3, n),
                "beta": rng.normal(0, 0.2, n),
                "moving_mean": rng.normal(0, 0.3, n),
                "moving_variance": rng.uniform(0.4, 2.0, n),
            }
    return weights


def write_keras_h5(path: Path, layers, weights, model_config=True) -> Path:
    outputs = [[layers[-1]["name"], 0, 0]]
    config = {
        "class_name": "Model",
        "config": {
            "name": "model_1",
            "layers": layers,
            "input_layers": [[layers[0]["name"], 0, 0]],
            "output_layers": outputs,
        },
    }
    with h5py.File(path, "w") as h5:
        if model_config:
            h5.attrs["model_config"] = json.dumps(config).encode()
        root = h5.create_group("model_weights")
        for entry in layers:
            group = root.create_group(entry["name"])
            roles = weights.get(entry["name"], {})
            group.attrs["weight_names"] = [f"{entry['name']}/{role}:0".encode() for role in roles]
            for role, value in roles.items():
                group.create_dataset(f"{entry['name']}/{role}:0", data=np.asarray(value, dtype=np.float32))
    return path


def write_spliceai_h5(path: Path, seed=0, **shape) -> Path:
    layers = spliceai_layers(**shape)
    return write_keras_h5(path, layers, random_weights(layers, np.random.default_rng(seed)))
