"""Every value inside a re-scorer folder or a base model's weights file is checked before it is
used (issue 48): types and ranges of the manifest's fields, the manifest's own sha256, the fold
models' model.json, tensor dtypes and finite values, sizes read from headers before anything is
allocated, the tree's size, the converter's walk, the base model's sha256 at parse time, and no
machine path in what errorseq ships. Each refusal is one line naming the file and the field."""

from __future__ import annotations

import hashlib
import io
import json
import pickle
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch

from tests.site_fixtures import settings
from tests.unit.test_rescorer_files import (  # noqa: F401  (fixtures)
    ROOT,
    an_old_rescorer_pkl,
    deep_source,  # noqa: F811
    fitted,
    one_openmp_thread,
    saved,
    source,  # noqa: F811
)
from workflow_scripts.config.sections import complete_section, section_defaults
from workflow_scripts.config.stages import stage
from workflow_scripts.errors import InputError
from workflow_scripts.sites.deep_transfer import trained_models
from workflow_scripts.sites.rescorer_files import load_rescorer
from workflow_scripts.sites.rescorer_manifest import read_manifest
from workflow_scripts.workflow.preflight import check_input_files

DIGEST = "manifest_sha256"


def recorded(document: dict) -> dict:
    """The manifest with its own sha256 re-recorded, where it carries one (a hand edit that
    re-records it reaches the field checks behind it)."""
    if DIGEST in document:
        content = {key: value for key, value in document.items() if key != DIGEST}
        canonical = json.dumps(content, sort_keys=True, separators=(",", ":"))
        document[DIGEST] = hashlib.sha256(canonical.encode()).hexdigest()
    return document


def edit(folder: Path, change) -> None:
    document = json.loads((folder / "rescorer.json").read_text())
    change(document)
    (folder / "rescorer.json").write_text(json.dumps(recorded(document)))


def swap(folder: Path, name: str, data: bytes) -> None:
    (folder / name).write_bytes(data)
    edit(folder, lambda d: d["files"].__setitem__(name, hashlib.sha256(data).hexdigest()))


def refusal(folder: Path, load=None) -> InputError:
    """The InputError of loading `folder` (parse time: read_manifest; job: load_rescorer)."""
    with pytest.raises(InputError) as refused:
        (load or (lambda: load_rescorer(str(folder), settings())))()
    assert "\n" not in str(refused.value)
    return refused.value


def at_parse_time(folder: Path) -> InputError:
    here = {"flank": 25, "floor": 0.005, "peak_radius": 2, "consensus_window": 2}
    return refusal(folder, lambda: read_manifest(str(folder), here, 103))


def set_path(document: dict, path: str, value) -> None:
    *parents, last = path.split(".")
    for part in parents:
        document = document[part]
    document[last] = value


# ---- the manifest's fields -----------------------------------------------------------------------
MANIFEST_FIELDS = {
    "threshold -1": ("thresholds.tree.donor", -1, "thresholds.tree.donor", "in [0, 1]"),
    "threshold 5": ("thresholds.base_tuned.acceptor", 5, "thresholds.base_tuned.acceptor", "in [0, 1]"),
    "recommended a string": ("results.recommended", "tree", "results.recommended", "want an object"),
    "recommended of no predictor": (
        "results.recommended",
        {"predictor": "magic"},
        "results.recommended.predictor",
        "'magic'",
    ),
    "base model a string": ("source.base_model", "OpenSpliceAI", "source.base_model", "want an object"),
    "trees -3": ("tree.trees", -3, "tree.trees", "want a count"),
    "source sites -1": ("source.source_sites", -1, "source.source_sites", "want a count"),
    "source scores a string": ("source.source_scores", "s.parquet", "source.source_scores", "want a list"),
    "answer a number": ("results.answer", 0.9, "results.answer", "want a string"),
    "a fold entry of one key": ("deep_models", [{"weights": "tree.npz"}], "deep_models[0].config", "missing"),
}


@pytest.mark.parametrize("path, value, field, message", MANIFEST_FIELDS.values(), ids=MANIFEST_FIELDS.keys())
def test_a_manifest_field_of_the_wrong_type_or_range_is_refused_at_parse_time(
    source,  # noqa: F811
    tmp_path,
    path,
    value,
    field,
    message,  # noqa: F811
):
    folder = saved(source, tmp_path / "rescorer")
    edit(folder, lambda d: set_path(d, path, value))
    for refused in (at_parse_time(folder), refusal(folder)):
        assert (Path(refused.source).name, refused.field) == ("rescorer.json", field), str(refused)
        assert message in refused.message, str(refused)


def test_a_base_model_file_without_its_sha256_is_refused_at_parse_time(source, tmp_path):  # noqa: F811
    folder = saved(source, tmp_path / "rescorer")
    base = {"source": "weights", "files": [{"path": "m.pt", "bytes": 3}], "family": "openspliceai"}
    edit(folder, lambda d: d["source"].__setitem__("base_model", base))
    refused = at_parse_time(folder)
    assert refused.field == "source.base_model.files[0].sha256" and "missing" in refused.message


def test_a_nan_threshold_is_named_as_nan(source, tmp_path):  # noqa: F811
    folder = saved(source, tmp_path / "rescorer")
    edit(folder, lambda d: d["thresholds"]["tree"].__setitem__("donor", float("nan")))
    refused = at_parse_time(folder)
    assert refused.field == "thresholds.tree.donor" and "NaN" in refused.message, str(refused)
    assert "found a number" not in refused.message


def test_the_manifest_records_its_own_sha256_and_a_hand_edit_is_refused(source, tmp_path):  # noqa: F811
    folder = saved(source, tmp_path / "rescorer")
    document = json.loads((folder / "rescorer.json").read_text())
    assert document[DIGEST] == recorded(dict(document))[DIGEST]  # the writer recorded it
    document["thresholds"]["tree"]["donor"] = 0.25  # in range, and not re-recorded
    (folder / "rescorer.json").write_text(json.dumps(document))
    refused = at_parse_time(folder)
    assert (refused.field, Path(refused.source).name) == (DIGEST, "rescorer.json"), str(refused)


# ---- the fold models' model.json and tensors -----------------------------------------------------
def fold_json(folder: Path, change) -> None:
    config = json.loads((folder / "fold1.json").read_text())
    change(config)
    swap(folder, "fold1.json", json.dumps(config).encode())


def fold_tensors(folder: Path, change) -> None:
    import safetensors.torch

    state = safetensors.torch.load((folder / "fold1.safetensors").read_bytes())
    swap(folder, "fold1.safetensors", safetensors.torch.save(change(state)))


def as_int32(state: dict) -> dict:
    return {name: (tensor * 100).to(torch.int32) for name, tensor in state.items()}


def with_nan(state: dict) -> dict:
    name = sorted(n for n, t in state.items() if t.is_floating_point())[0]
    state[name] = state[name].clone()
    state[name].view(-1)[0] = float("nan")
    return state


FOLD_REFUSED = {
    "max_tokens -5": (
        lambda f: fold_json(f, lambda c: c.__setitem__("max_tokens", -5)),
        "fold1.json",
        "max_tokens",
    ),
    "an unknown input column": (
        lambda f: fold_json(f, lambda c: c.__setitem__("input_columns", ["score", "gc_content"])),
        "fold1.json",
        "input_columns",
    ),
    "an unknown score channel": (
        lambda f: fold_json(f, lambda c: c.__setitem__("score_channels", ["exon_scores"])),
        "fold1.json",
        "score_channels",
    ),
    "d_model -32": (
        lambda f: fold_json(f, lambda c: c["model"].__setitem__("d_model", -32)),
        "fold1.json",
        "model.d_model",
    ),
    "int32 tensors": (lambda f: fold_tensors(f, as_int32), "fold1.safetensors", "dtype"),
    "a NaN weight": (lambda f: fold_tensors(f, with_nan), "fold1.safetensors", "NaN"),
}


@pytest.mark.parametrize("damage, name, what", FOLD_REFUSED.values(), ids=FOLD_REFUSED.keys())
def test_a_fold_models_json_or_tensors_are_refused_before_any_model_is_built(
    deep_source,  # noqa: F811
    tmp_path,
    damage,
    name,
    what,  # noqa: F811
):
    folder = saved(deep_source, tmp_path / "rescorer")
    damage(folder)
    refused = refusal(folder, lambda: trained_models(load_rescorer(str(folder), settings()).deep, 4, "x"))
    assert refused.source.endswith(name), str(refused)
    assert what in f"{refused.field}: {refused.message}", str(refused)


def test_the_fold_json_is_checked_at_parse_time(deep_source, tmp_path):  # noqa: F811
    folder = saved(deep_source, tmp_path / "rescorer")
    fold_json(folder, lambda c: c.__setitem__("max_tokens", -5))
    refused = at_parse_time(folder)
    assert refused.source.endswith("fold1.json") and refused.field == "max_tokens", str(refused)


def safetensors_claiming(shape: tuple[int, ...]) -> bytes:
    """A safetensors file whose header claims `shape` float32 values over 16 bytes of data."""
    header = json.dumps({"w": {"dtype": "F32", "shape": list(shape), "data_offsets": [0, 16]}}).encode()
    return struct.pack("<Q", len(header)) + header + bytes(16)


def test_a_safetensors_header_that_does_not_fit_its_file_is_refused_at_parse_time(deep_source, tmp_path):  # noqa: F811
    folder = saved(deep_source, tmp_path / "rescorer")
    swap(folder, "fold1.safetensors", safetensors_claiming((10**6, 10**6)))
    refused = at_parse_time(folder)
    assert refused.source.endswith("fold1.safetensors") and refused.field == "w", str(refused)


# ---- the tree: sizes from the header, a bound on its size -----------------------------------------
def npz_claiming(count: int) -> bytes:
    """A ~300-byte tree.npz whose first array's header claims `count` float64 values."""
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False, "shape": (count,)})
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("value.npy", header.getvalue() + bytes(16))
    return buffer.getvalue()


def test_a_tree_npz_claiming_more_values_than_it_holds_is_refused_unallocated(source, tmp_path):  # noqa: F811
    folder = saved(source, tmp_path / "rescorer")
    swap(folder, "tree.npz", npz_claiming(10**12))
    assert len((folder / "tree.npz").read_bytes()) < 400
    for refused in (at_parse_time(folder), refusal(folder)):
        assert Path(refused.source).name == "tree.npz" and refused.field == "value", str(refused)


def chain_tree(nodes: int) -> bytes:
    """One valid tree that is a chain: every internal node has a leaf on its left."""
    index = np.arange(nodes, dtype=np.int64)
    inner = (index % 2 == 0) & (index < nodes - 1)
    arrays = {
        "value": np.zeros(nodes),
        "feature": np.zeros(nodes, dtype=np.int64),
        "threshold": np.zeros(nodes),
        "missing_left": np.zeros(nodes, dtype=bool),
        "left": np.where(inner, index + 1, 0),
        "right": np.where(inner, index + 2, 0),
        "is_leaf": ~inner,
        "tree_start": np.array([0, nodes], dtype=np.int64),
        "baseline": np.zeros(1),
    }
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def test_a_tree_larger_than_a_fitted_one_can_be_is_refused(source, tmp_path):  # noqa: F811
    folder = saved(source, tmp_path / "rescorer")
    swap(folder, "tree.npz", chain_tree(1_000_001))
    edit(folder, lambda d: d["tree"].__setitem__("trees", 1))
    refused = refusal(folder)
    assert Path(refused.source).name == "tree.npz" and "leaves" in refused.message, str(refused)


def test_the_converter_refuses_a_tree_that_loops_back_to_its_root(deep_source, tmp_path):  # noqa: F811
    found = fitted(seed=0)[0]
    old = tmp_path / "rescorer.pkl"
    estimator = an_old_rescorer_pkl(old, found, deep_source.thresholds)
    payload = pickle.loads(old.read_bytes())
    looped = payload["rescorer"].tree
    looped._predictors[0][0].nodes["left"][0] = 0  # the root its own left child
    old.write_bytes(pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL))
    assert estimator is not looped
    done = subprocess.run(
        [sys.executable, "-m", "workflow_scripts.sites.convert_rescorer", str(old), str(tmp_path / "new")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert f"{old}: left: a child outside its tree or before its node" in done.stderr
    assert not (tmp_path / "new").exists()


# ---- OpenSpliceAI .pt weights ------------------------------------------------------------------
def small_checkpoint(channels: int = 4) -> dict:
    from workflow_scripts.calling.openspliceai import OpenSpliceAIModel

    torch.manual_seed(0)
    return OpenSpliceAIModel(channels, 4).state_dict()


def test_a_nan_weight_in_an_openspliceai_checkpoint_is_refused_naming_the_tensor(tmp_path):
    from workflow_scripts.calling.openspliceai import load_openspliceai

    state = small_checkpoint()
    state["residual_units.2.conv1.weight"][0, 0, 3] = float("nan")
    torch.save(state, tmp_path / "model.pt")
    with pytest.raises(InputError) as refused:
        load_openspliceai(tmp_path / "model.pt")
    assert refused.value.source == str(tmp_path / "model.pt")
    assert refused.value.field == "residual_units.2.conv1.weight" and "NaN" in refused.value.message


def test_a_small_checkpoint_claiming_a_huge_model_is_refused_before_it_is_built(tmp_path):
    """A tensor whose shape claims 10^6 channels over one stored number (stride 0): the model it
    implies (4 TB) is never built."""
    from workflow_scripts.calling.openspliceai import load_openspliceai

    state = small_checkpoint()
    state["initial_conv.weight"] = torch.zeros(1).expand(10**6, 4, 1)
    torch.save(state, tmp_path / "model.pt")
    assert (tmp_path / "model.pt").stat().st_size < 100_000
    with pytest.raises(InputError) as refused:
        load_openspliceai(tmp_path / "model.pt")
    assert refused.value.field == "initial_conv.weight", str(refused.value)


def test_a_checkpoint_whose_shapes_disagree_is_refused_before_the_model_is_built(tmp_path, monkeypatch):
    from workflow_scripts.calling import openspliceai

    state = small_checkpoint()
    state["residual_units.1.conv2.weight"] = torch.zeros(4, 4, 7)
    torch.save(state, tmp_path / "model.pt")
    built = []
    monkeypatch.setattr(openspliceai.OpenSpliceAIModel, "__init__", lambda *a, **k: built.append(a))
    with pytest.raises(InputError) as refused:
        openspliceai.load_openspliceai(tmp_path / "model.pt")
    assert refused.value.field == "residual_units.1.conv2.weight" and not built, str(refused.value)


# ---- the base model's sha256 at parse time --------------------------------------------------------
def test_a_rescorer_of_another_base_model_is_refused_while_the_workflow_parses(source, tmp_path, monkeypatch):  # noqa: F811
    monkeypatch.chdir(tmp_path)
    folder = saved_for_another_base(source, tmp_path / "rescorer")
    (tmp_path / "weights").mkdir()
    (tmp_path / "weights/model_a.pt").write_bytes(b"PK\x03\x04 a model")
    (tmp_path / "genome.fa").write_text(">chr1\nACGT\n")
    calling = complete_section("calling", {"start": "regions", "base_model": {"weights": "weights"}})
    config = {
        "genome": "genome.fa",
        "calling": calling,
        "train": section_defaults("train"),
        "sites": complete_section("sites", {"transfer": str(folder)}),
    }
    with pytest.raises(InputError) as refused:
        check_input_files(config)
    assert refused.value.field == "source.base_model", str(refused.value)
    assert "a re-scorer corrects only the base model it was trained on" in refused.value.message
    assert "\n" not in str(refused.value)


def test_site_calls_refuses_a_rescorer_of_another_base_than_the_weights_behind_its_scores(source, tmp_path):  # noqa: F811
    """calling.start scores with calling.base_model.weights: the job compares the re-scorer's base
    model with the weights that made the scores table (its input made_by), before reading anything
    else, as it does with the score shards' records (the workflow checked it while parsing too)."""
    folder = saved_for_another_base(source, tmp_path / "rescorer")
    (tmp_path / "model_a.pt").write_bytes(b"PK\x03\x04 a model")
    config = json.dumps({"calling": {}, "sites": {}, "window": {}, "evaluate": {}})
    missing, scores = str(tmp_path / "missing"), tmp_path / "scores.tsv"
    scores.write_text("hashed for the provenance, never read\n")
    argv = ["--config", config, "--scores", str(scores), "--sites", missing, "--genes", missing]
    argv += ["--gene-clusters", missing, "--genome", missing, "--transfer", str(folder)]
    argv += ["--made-by", str(tmp_path / "model_a.pt")]
    for output in (out.name for out in stage("site_calls").outputs):
        argv += [f"--out-{output.replace('_', '-')}", str(tmp_path / "out" / output)]
    errors = refused_in_one_line("site_calls", argv)
    assert len(errors) == 1 and f"{folder}: source.base_model: the source genome was scored by" in errors[0]
    assert "model_a.pt" in errors[0] and "a re-scorer corrects only the base model" in errors[0], errors
    assert not (tmp_path / "out").exists()


# ---- sites.flank, and no machine path in what ships -----------------------------------------------
@pytest.mark.parametrize("flank", [101, 1000])
def test_sites_flank_has_a_maximum_a_run_can_afford(flank):
    from workflow_scripts.sites.predictors import LARGE_FLANK

    assert complete_section("sites", {"flank": 100})["flank"] == 100 > LARGE_FLANK  # warned, run
    with pytest.raises(InputError) as refused:
        complete_section("sites", {"flank": flank})
    assert refused.value.field == "sites.flank"


def strings(value) -> list[str]:
    if isinstance(value, dict):
        return [text for item in value.values() for text in strings(item)]
    if isinstance(value, list):
        return [text for item in value for text in strings(item)]
    return [value] if isinstance(value, str) else []


def test_the_shipped_rescorers_carry_no_machine_path():
    from workflow_scripts.rescorers import FOLDER, available

    assert available()
    for name in available():
        document = json.loads((FOLDER / name / "rescorer.json").read_text())
        machine = [text for text in strings(document) if text.startswith(("/", "~")) or ":\\" in text]
        assert machine == [], name
        assert DIGEST in document, name


def test_site_calls_records_the_base_models_file_names_not_their_paths(source):  # noqa: F811
    from workflow_scripts.rules.site_calls import with_provenance

    base = {
        "source": "weights",
        "files": [{"path": "/data/models/a.pt", "bytes": 3, "sha256": "a" * 64}],
        "identical_files": [["/data/models/a.pt", "/other/b.pt"]],
    }
    recorded_source = with_provenance(source, {"base_model": base}).source["base_model"]
    assert recorded_source["files"] == [{"path": "a.pt", "bytes": 3, "sha256": "a" * 64}]
    assert recorded_source["identical_files"] == [["a.pt", "b.pt"]]


@pytest.mark.parametrize("channels, units", [(4, 4), (8, 8), (32, 16)])
def test_the_checkpoint_shapes_by_arithmetic_are_the_modules_own(channels, units):
    from workflow_scripts.calling.openspliceai import OpenSpliceAIModel, expected_shapes

    with torch.device("meta"):
        module = OpenSpliceAIModel(channels, units)
    own = {name: (tuple(value.shape), value.dtype) for name, value in module.state_dict().items()}
    assert expected_shapes(channels, units) == own


def test_the_tree_bounds_are_the_schemas_maxima():
    from workflow_scripts.config.sections import section_schema
    from workflow_scripts.sites.tree_arrays import MAX_LEAVES, MAX_TREES

    tree = section_schema("sites")["properties"]["tree"]["properties"]
    assert (tree["max_leaf_nodes"]["maximum"], tree["max_iter"]["maximum"]) == (MAX_LEAVES, MAX_TREES)


# ---- Keras .h5 weights: sizes from the dataset's header, dtypes ----------------------------------
def keras_h5_with(tmp_path: Path, replace) -> Path:
    import h5py

    from tests.spliceai_fixtures import random_weights, spliceai_layers, write_keras_h5

    layers = spliceai_layers()
    path = write_keras_h5(tmp_path / "model.h5", layers, random_weights(layers, np.random.default_rng(0)))
    with h5py.File(path, "r+") as h5:
        group = h5["model_weights/u2_a_conv"]
        name = "u2_a_conv/kernel:0"
        shape = group[name].shape
        del group[name]
        replace(group, name, shape)
    return path


KERAS_REFUSED = {
    "a kernel claiming 10^12 values it does not store": (
        lambda group, name, shape: group.create_dataset(name, shape=(10**6, 10**6), dtype="f4"),
        "claims",
    ),
    "an integer kernel": (
        lambda group, name, shape: group.create_dataset(name, data=np.ones(shape, dtype=np.int32)),
        "int32",
    ),
}


@pytest.mark.parametrize("replace, message", KERAS_REFUSED.values(), ids=KERAS_REFUSED.keys())
def test_a_keras_weight_is_checked_from_its_header_before_it_is_read(tmp_path, replace, message):
    from workflow_scripts.calling.keras_h5 import read_keras_model

    path = keras_h5_with(tmp_path, replace)
    with pytest.raises(InputError) as refused:
        read_keras_model(path)
    assert refused.value.field == "layer u2_a_conv weight kernel" and message in refused.value.message, str(
        refused.value
    )


def test_rescore_sites_refuses_a_bad_manifest_in_one_line_before_reading_anything_else(source, tmp_path):  # noqa: F811
    """results.recommended as a string ended in a traceback after the candidates and deep models ran."""
    folder = saved(source, tmp_path / "rescorer")
    edit(folder, lambda d: d["results"].__setitem__("recommended", "tree"))
    missing = str(tmp_path / "missing")
    config = json.dumps({"calling": {}, "sites": {}, "evaluate": {}})
    argv = ["--config", config, "--scores", missing, "--regions", missing, "--genome", missing]
    argv += ["--transfer", str(folder)]
    for output in (out.name for out in stage("rescore_sites").outputs):
        argv += [f"--out-{output}", str(tmp_path / "out" / output)]
    errors = refused_in_one_line("rescore_sites", argv)
    assert errors == [
        f"errorseq: error: {folder / 'rescorer.json'}: results.recommended: want an object, found a string"
    ], errors
    assert not (tmp_path / "out").exists()


def test_every_predictor_site_calls_may_recommend_is_accepted(source, tmp_path):  # noqa: F811
    """A source run that itself had a transfer recommends transfer_tree (tests/long caught it)."""
    from workflow_scripts.sites import predictors
    from workflow_scripts.sites.recommend import RESCORERS
    from workflow_scripts.sites.rescorer_checks import RECOMMENDABLE

    known = {value for name, value in vars(predictors).items() if name.isupper() and isinstance(value, str)}
    assert {predictors.BASE_TUNED, *RESCORERS} <= set(RECOMMENDABLE) <= known
    for number, predictor in enumerate(RECOMMENDABLE):
        folder = saved(source, tmp_path / f"rescorer{number}")
        edit(
            folder, lambda d, chosen=predictor: d["results"].__setitem__("recommended", {"predictor": chosen})
        )
        read_manifest(
            str(folder), {"flank": 25, "floor": 0.005, "peak_radius": 2, "consensus_window": 2}, 103
        )


def refused_in_one_line(rule: str, argv: list[str]) -> list[str]:
    """Run a rule's program; it must exit 2 without a traceback: its `errorseq: error:` lines."""
    done = subprocess.run(
        [sys.executable, "-m", f"workflow_scripts.rules.{rule}", *argv],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    return [line for line in done.stderr.splitlines() if line.startswith("errorseq: error:")]


def saved_for_another_base(fitted, folder: Path) -> Path:
    """A re-scorer whose manifest names a base model no test here has (a human OpenSpliceAI file)."""
    other = {
        "source": "weights",
        "files": [{"path": "model_10000nt_rs10.pt", "bytes": 9, "sha256": "0" * 64}],
        "family": "openspliceai",
        "species": "Homo sapiens",
    }
    saved_folder = saved(fitted, folder)
    edit(saved_folder, lambda d: d["source"].__setitem__("base_model", other))
    return saved_folder
