"""The PyTorch port of SpliceAI-family Keras models: same probabilities as the Keras layers
computed in numpy (tests/spliceai_fixtures.py), on a random-weight model written here and on the
real SpliceAI-10k models of the installed `spliceai` package (the five-model ensemble:
tests/workflow/test_spliceai.py)."""

from __future__ import annotations

import json

import h5py
import numpy as np
import pytest
import torch

from tests.spliceai_fixtures import (
    installed_spliceai_models,
    layer_entry,
    numpy_forward,
    one_hot_numpy,
    random_weights,
    spliceai_layers,
    tair10_chr1_prefix,
    write_keras_h5,
    write_spliceai_h5,
)
from workflow_scripts.calling.keras_h5 import read_keras_model
from workflow_scripts.calling.model_files import weight_files
from workflow_scripts.calling.spliceai import (
    SpliceAIEnsemble,
    SpliceAIModel,
    describe,
    load_ensemble,
    load_model,
    one_hot,
)
from workflow_scripts.errors import InputError


def random_sequence(length: int, seed: int) -> str:
    rng = np.random.default_rng(seed)
    bases = rng.choice(list("ACGT"), size=length)
    bases[rng.random(length) < 0.02] = "N"  # N rows are all-zero inputs
    bases[:7] = "N"
    return "".join(bases)


def torch_forward(model, sequence: str) -> np.ndarray:
    codes = torch.frombuffer(bytearray(sequence.encode()), dtype=torch.uint8)[None]
    with torch.inference_mode():
        return model(one_hot(codes))[0].T.double().numpy()  # (length, 3), channels last like Keras


def test_one_hot_is_acgt_with_n_zero():
    codes = torch.frombuffer(bytearray(b"ACGTNacgtX"), dtype=torch.uint8)[None]
    encoded = one_hot(codes)[0].T.numpy()
    np.testing.assert_array_equal(encoded[:5], one_hot_numpy("ACGTN"))
    np.testing.assert_array_equal(encoded[5:9], np.eye(4))  # soft-masked bases read as upper case
    np.testing.assert_array_equal(encoded[9], np.zeros(4))


def test_random_model_matches_numpy_reference(tmp_path):
    path = write_spliceai_h5(tmp_path / "tiny.h5", seed=3)
    model = load_model(path)
    assert (model.flank_left, model.flank_right) == (2 + 8 + 8, 2 + 8 + 8)
    sequence = random_sequence(300, seed=1)
    expected = numpy_forward(path, one_hot_numpy(sequence))
    got = torch_forward(model, sequence)
    assert got.shape == expected.shape == (300 - 36, 3)
    assert expected.min() < 0.2 and expected.max() > 0.6  # not a flat softmax: the test can see errors
    np.testing.assert_allclose(got, expected, atol=1e-5, rtol=0)


def test_even_kernel_same_padding_matches_keras(tmp_path):
    """'same' with an odd total padding puts the extra zero on the right, as Keras does."""
    path = write_spliceai_h5(tmp_path / "even.h5", seed=4, units=((4, 1), (2, 3)), group=1)
    sequence = random_sequence(120, seed=2)
    np.testing.assert_allclose(
        torch_forward(load_model(path), sequence),
        numpy_forward(path, one_hot_numpy(sequence)),
        atol=1e-5,
        rtol=0,
    )


# AT1G01010 (+ strand, 3631-5899): its first intron is 3914-3995 (donor at 3913, acceptor at 3996).
# 1-based positions 3601..4100 of chromosome 1 with 5,000 nt of context on each side: the first
# 5,000 of them lie before the chromosome start and are N, as at any chromosome end.
GENE_WINDOW = (3601, 4100)


def real_gene_input() -> str:
    first, last = GENE_WINDOW
    chromosome = tair10_chr1_prefix(last + 5000)
    return "N" * (5000 - first + 1) + chromosome[: last + 5000]


def test_real_spliceai_matches_numpy_reference():
    path = installed_spliceai_models()[0]
    sequence = real_gene_input()
    expected = numpy_forward(path, one_hot_numpy(sequence))
    got = torch_forward(load_model(path), sequence)
    assert got.shape == expected.shape == (500, 3)
    # the window holds splice sites, so the comparison covers probabilities far from 0 and 1
    assert expected[:, 1:].max() > 0.5 and ((expected[:, 1:] > 0.05) & (expected[:, 1:] < 0.95)).any()
    np.testing.assert_allclose(got, expected, atol=1e-5, rtol=0)


def test_real_spliceai_architecture_from_its_file():
    path = installed_spliceai_models()[0]
    keras = read_keras_model(path)
    facts = describe(SpliceAIModel(keras), keras)
    assert facts["residual_units"] == 16 and facts["channels"] == [32]
    assert facts["flanks"] == [5000, 5000]
    pairs = [tuple(pair) for pair in facts["dilated_convolutions"][::2]]  # two convolutions per unit
    assert pairs == [(11, 1)] * 4 + [(11, 4)] * 4 + [(21, 10)] * 4 + [(41, 25)] * 4


def test_weight_files_from_directory_or_list(tmp_path):
    paths = [write_spliceai_h5(tmp_path / f"m{i}.h5", seed=i) for i in (2, 1)]
    (tmp_path / "notes.txt").write_text("not a model")
    assert weight_files(tmp_path) == sorted(paths)
    assert weight_files([str(p) for p in paths]) == paths
    assert weight_files(str(paths[0])) == [paths[0]]
    ensemble = load_ensemble(tmp_path)
    sequence = random_sequence(100, seed=3)
    each = [numpy_forward(p, one_hot_numpy(sequence)) for p in sorted(paths)]
    np.testing.assert_allclose(torch_forward(ensemble, sequence), np.mean(each, axis=0), atol=1e-5)


def expect_error(path, field_part, message_part, load=load_model):
    with pytest.raises(InputError) as caught:
        load(path)
    text = str(caught.value)
    assert str(path) in text and field_part in caught.value.field and message_part in caught.value.message, (
        text
    )
    assert "\n" not in text


def test_wrong_kernel_shape_names_file_and_layer(tmp_path):
    layers = spliceai_layers()
    weights = random_weights(layers, np.random.default_rng(0))
    weights["u2_a_conv"]["kernel"] = weights["u2_a_conv"]["kernel"][:, :, :5]
    path = write_keras_h5(tmp_path / "bad.h5", layers, weights)
    expect_error(
        path, "layer u2_a_conv weight kernel", "shape (5, 8, 5), but the model config implies (5, 8, 8)"
    )


def test_missing_and_wrong_batch_norm_weights(tmp_path):
    layers = spliceai_layers()
    weights = random_weights(layers, np.random.default_rng(0))
    del weights["u1_b_bn"]["moving_variance"]
    expect_error(
        write_keras_h5(tmp_path / "a.h5", layers, weights), "layer u1_b_bn weight moving_variance", "missing"
    )
    weights = random_weights(layers, np.random.default_rng(0))
    weights["u3_a_bn"]["gamma"] = np.ones(9)
    expect_error(
        write_keras_h5(tmp_path / "b.h5", layers, weights), "layer u3_a_bn weight gamma", "shape (9,)"
    )


def test_not_a_spliceai_model(tmp_path):
    text = tmp_path / "text.h5"
    text.write_text("hello")
    expect_error(text, "file", "not an HDF5 file")
    expect_error(tmp_path / "absent.h5", "file", "not found")
    layers = spliceai_layers()
    weights_only = write_keras_h5(
        tmp_path / "weights.h5", layers, random_weights(layers, np.random.default_rng(0)), model_config=False
    )
    expect_error(weights_only, "model_config", "no Keras model config")
    for name, shape, field in (
        ("five.h5", {"in_channels": 5}, "layer input_1"),
        ("two.h5", {"out_channels": 2}, "layer output"),
    ):
        layers = spliceai_layers(**shape)
        path = write_keras_h5(tmp_path / name, layers, random_weights(layers, np.random.default_rng(0)))
        expect_error(path, field, "SpliceAI model")


def test_unsupported_layer_is_named(tmp_path):
    layers = spliceai_layers()
    layers.insert(3, layer_entry("lstm_1", "LSTM", ["stem"], units=4))
    layers[4]["inbound_nodes"] = [[["lstm_1", 0, 0, {}]]]
    path = write_keras_h5(
        tmp_path / "lstm.h5", layers, random_weights(spliceai_layers(), np.random.default_rng(0))
    )
    expect_error(path, "layer lstm_1", "LSTM is not a SpliceAI layer")


def test_model_config_from_real_keras_layout(tmp_path):
    """The writer here matches the real files' layout (so the random-weight tests mean something)."""
    real = installed_spliceai_models()[0]
    ours = write_spliceai_h5(tmp_path / "ours.h5")
    with h5py.File(real) as a, h5py.File(ours) as b:
        layer_a = json.loads(a.attrs["model_config"])["config"]["layers"][1]
        layer_b = json.loads(b.attrs["model_config"])["config"]["layers"][1]
        assert layer_a["class_name"] == layer_b["class_name"] == "Conv1D"
        assert set(layer_b["config"]) <= set(layer_a["config"])
        assert len(layer_a["inbound_nodes"][0][0]) == len(layer_b["inbound_nodes"][0][0])
        name_a = a["model_weights/conv1d_1"].attrs["weight_names"][0].decode()
        assert name_a == "conv1d_1/kernel:0" and "conv1d_1/conv1d_1/kernel:0" in a["model_weights"]
        assert "stem/stem/kernel:0" in b["model_weights"]


def test_ensemble_refuses_models_with_different_context(tmp_path):
    small = write_spliceai_h5(tmp_path / "a.h5", units=((3, 1),))
    large = write_spliceai_h5(tmp_path / "b.h5", units=((3, 1), (3, 2)))
    with pytest.raises(InputError) as caught:
        SpliceAIEnsemble([load_model(small), load_model(large)])
    assert str(large) in str(caught.value) and "flanks 6+6 nt differ" in str(caught.value)


def test_empty_weight_directory(tmp_path):
    with pytest.raises(InputError, match="no .h5 or .pt files"):
        weight_files(tmp_path)
    with pytest.raises(InputError, match="calling.base_model.weights: not found"):
        weight_files(tmp_path / "missing")
    with pytest.raises(InputError, match="calling.base_model.weights: file not found"):
        weight_files([tmp_path / "missing.h5"])


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda text: text[: len(text) // 2], "not valid JSON"),
        (lambda text: b"\xff" + text, "not valid JSON"),
        (lambda text: b"[1, 2]", "class 'list'"),
        (lambda text: b'{"class_name": "Functional"}', "no 'config' object"),
    ],
    ids=["truncated", "not-utf8", "a-list", "no-config"],
)
def test_damaged_model_config_is_one_error(tmp_path, damage, message):
    """A truncated model_config attribute used to end in a JSONDecodeError traceback."""
    layers = spliceai_layers()
    path = write_keras_h5(tmp_path / "a.h5", layers, random_weights(layers, np.random.default_rng(0)))
    with h5py.File(path, "r+") as h5:
        text = h5.attrs["model_config"]
        h5.attrs["model_config"] = damage(text.encode() if isinstance(text, str) else bytes(text))
    expect_error(path, "model_config", message)


def test_a_nan_kernel_is_refused_before_scoring(tmp_path):
    """A NaN weight used to give a finished-looking scores.parquet full of NaN."""
    layers = spliceai_layers()
    weights = random_weights(layers, np.random.default_rng(0))
    weights["u2_a_conv"]["kernel"][0, 0, 0] = np.nan
    path = write_keras_h5(tmp_path / "nan.h5", layers, weights)
    expect_error(path, "layer u2_a_conv weight kernel", "1 values are NaN or infinite")
