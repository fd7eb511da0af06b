"""The re-scorer folder (sites/rescorer_files.py, rescorer_manifest.py, tree_arrays.py): saved and
loaded it gives the same probabilities bit for bit, and every damaged, foreign or mismatched part
is refused in one line naming the file and the field, a pickle above all, whose code never runs."""

from __future__ import annotations

import io
import json
import os
import pickle
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch
from sklearn.ensemble import HistGradientBoostingClassifier
from threadpoolctl import threadpool_limits

from tests.site_fixtures import profile_genome, settings
from workflow_scripts.config.sections import complete_section, section_defaults
from workflow_scripts.errors import InputError
from workflow_scripts.inference.predict_calls import TrainedModel
from workflow_scripts.models.builtin import build_model
from workflow_scripts.sites.candidates import feature_names, find_candidates
from workflow_scripts.sites.deep_transfer import DeepModels, trained_models
from workflow_scripts.sites.folds import assign_folds
from workflow_scripts.sites.items import Items
from workflow_scripts.sites.predictors import predict_out_of_fold
from workflow_scripts.sites.rescorer import fit_rescorer
from workflow_scripts.sites.rescorer_files import load_rescorer, save_rescorer
from workflow_scripts.sites.tree_arrays import TreeEnsemble
from workflow_scripts.tokenization.tokenizers import NucleotideTokenizer
from workflow_scripts.workflow.preflight import check_input_files

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = {"numpy": np.__version__}
RESULTS = {"answer": "made up"}


@pytest.fixture(autouse=True, scope="module")
def one_openmp_thread():
    with threadpool_limits(limits=1, user_api="openmp"):
        yield


def fitted(seed: int):
    scores, sites, genes, clusters = profile_genome(seed=seed)
    found = assign_folds(find_candidates([("chr1", scores)], sites, genes, settings()), clusters, 5, seed=0)
    items = Items.from_candidates(found)
    return found, items, predict_out_of_fold(found, items, settings())


WINDOW = {"flank": 5, "length": 11, "site_offset": 5}


def tiny_model_json() -> dict:
    """model.json of a tiny CNN on 11-nt windows, as train records it (what predict reads)."""
    tokenizer = NucleotideTokenizer(1)
    return {
        "model": {"d_model": 8, "n_layers": 1},
        "tokenizer": tokenizer.to_dict(),
        "max_tokens": 16,
        "window": dict(WINDOW),
        "input_columns": [],
        "score_channels": [],
    }


def tiny_state(seed: int) -> dict:
    torch.manual_seed(seed)
    saved = tiny_model_json()
    model = build_model(
        saved["model"], NucleotideTokenizer(1).vocab_size, saved["max_tokens"], pretrained=False
    )
    return model.state_dict()


@pytest.fixture(scope="module")
def source():
    found, items, predictions = fitted(seed=0)
    return fit_rescorer(found, items, predictions, settings(), {"source": "chr1", "source_sites": 1})


@pytest.fixture(scope="module")
def deep_source():
    """A source that ran sites.model: two fold models (stand-in out-of-fold probabilities)."""
    found, items, predictions = fitted(seed=0)
    truth = found.table["is_true_site"].to_numpy()
    predictions = replace(predictions, errorseq_probability=np.where(truth, 0.8, 0.2))
    deep = DeepModels((tiny_state(1), tiny_state(2)), (tiny_model_json(), tiny_model_json()))
    return fit_rescorer(found, items, predictions, settings(), {"source": "chr1", "source_sites": 1}, deep)


def saved(rescorer, folder: Path) -> Path:
    save_rescorer(rescorer, str(folder), PACKAGES, RESULTS)
    return folder


# ---- the round trip ----------------------------------------------------------------------------
def test_a_saved_rescorer_loads_to_the_same_probabilities_and_thresholds(source, tmp_path):
    folder = saved(source, tmp_path / "rescorer")
    assert sorted(p.name for p in folder.iterdir()) == ["rescorer.json", "tree.npz"]
    loaded = load_rescorer(str(folder), settings())
    features = fitted(seed=2)[0].features
    assert np.array_equal(loaded.probability(features), source.probability(features))
    assert loaded.thresholds == source.thresholds and loaded.settings == source.settings
    assert loaded.source == {"source": "chr1", "source_sites": 1} and loaded.deep is None
    manifest = json.loads((folder / "rescorer.json").read_text())
    assert manifest["tree"]["n_features"] == len(feature_names(settings().flank)) == 103
    assert manifest["packages"] == PACKAGES and manifest["results"] == RESULTS


def test_saving_again_replaces_the_folder_and_leaves_no_temporary_one(source, tmp_path):
    saved(source, tmp_path / "rescorer")
    (tmp_path / "rescorer" / "stale.txt").write_text("from an older run")
    saved(source, tmp_path / "rescorer")
    assert [p.name for p in tmp_path.iterdir()] == ["rescorer"]
    load_rescorer(str(tmp_path / "rescorer"), settings())  # no unknown file left in it


def test_the_marker_snakemake_leaves_in_an_output_folder_is_no_unknown_file(source, tmp_path):
    folder = saved(source, tmp_path / "rescorer")
    (folder / ".snakemake_timestamp").write_bytes(b"")
    load_rescorer(str(folder), settings())


@pytest.mark.parametrize("seed, leaves", [(0, 31), (1, 7), (2, 63)])
def test_the_tree_arrays_give_scikit_learns_probabilities_bit_for_bit(seed, leaves):
    """Missing values (NaN where a position is unscored) included, in training and prediction."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(3000, 21)).astype(np.float32)
    x[rng.random(x.shape) < 0.15] = np.nan
    y = np.nan_to_num(x[:, 3]) + np.nan_to_num(x[:, 7]) * 0.5 + rng.normal(size=3000) * 0.7 > 0
    estimator = HistGradientBoostingClassifier(max_iter=40, max_leaf_nodes=leaves, early_stopping=False)
    estimator.fit(x, y)
    probe = rng.normal(size=(5000, 21)).astype(np.float32)
    probe[rng.random(probe.shape) < 0.15] = np.nan
    tree = TreeEnsemble.from_estimator(estimator)
    assert np.array_equal(tree.probability(probe), estimator.predict_proba(probe)[:, 1])


def test_the_deep_models_travel_as_safetensors_and_score_the_same(deep_source, tmp_path):
    folder = saved(deep_source, tmp_path / "rescorer")
    names = sorted(p.name for p in folder.iterdir())
    assert names == [
        "fold1.json",
        "fold1.safetensors",
        "fold2.json",
        "fold2.safetensors",
        "rescorer.json",
        "tree.npz",
    ]
    loaded = load_rescorer(str(folder), settings())
    assert loaded.thresholds == deep_source.thresholds and loaded.deep.flank == 5
    sequences = ["ACGTACGTACG", "TTTTTGTAAGT", "NNACGTAGNNN"]
    lengths = np.full(3, 11)
    for state, config, model in zip(
        deep_source.deep.states,
        deep_source.deep.configs,
        trained_models(loaded.deep, 4, str(folder)),
        strict=True,
    ):
        original = TrainedModel.from_weights(state, config, 4, "model.pt", "model.json")
        assert np.array_equal(model.p_error(sequences, lengths), original.p_error(sequences, lengths))


# ---- refusals ----------------------------------------------------------------------------------
def edit_manifest(folder: Path, change) -> None:
    """A hand edit that re-records the manifest's own sha256, so the check behind it is reached."""
    from workflow_scripts.sites.rescorer_checks import DIGEST, manifest_digest

    document = json.loads((folder / "rescorer.json").read_text())
    change(document)
    if DIGEST in document:
        document[DIGEST] = manifest_digest(document)
    (folder / "rescorer.json").write_text(json.dumps(document))


def swap_file(folder: Path, name: str, data: bytes) -> None:
    """Another file under `name`, its sha256 in the manifest updated: what is checked next is its content."""
    import hashlib

    (folder / name).write_bytes(data)
    edit_manifest(folder, lambda d: d["files"].__setitem__(name, hashlib.sha256(data).hexdigest()))


def tree_arrays_with(folder: Path, **changed) -> bytes:
    with np.load(folder / "tree.npz") as stored:
        arrays = {name: stored[name] for name in stored.files}
    for name, change in changed.items():
        arrays[name] = change(arrays[name].copy())
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def backwards_child(left: np.ndarray) -> np.ndarray:
    left[0] = 0  # the root its own child: a walk that never ends
    return left


def set_version(document: dict) -> None:
    document["version"] = 2


REFUSED = {
    "tampered tree (sha256)": (
        lambda f: (f / "tree.npz").write_bytes(b"x" + (f / "tree.npz").read_bytes()[1:]),
        "tree.npz",
        "sha256",
        "differs from the one in rescorer.json",
    ),
    "truncated manifest": (
        lambda f: (f / "rescorer.json").write_bytes((f / "rescorer.json").read_bytes()[:200]),
        "rescorer.json",
        "json",
        "not JSON, or cut short",
    ),
    "foreign JSON": (
        lambda f: (f / "rescorer.json").write_text('{"name": "a model card"}'),
        "rescorer.json",
        "format",
        "not an errorseq site re-scorer",
    ),
    "JSON list": (
        lambda f: (f / "rescorer.json").write_text("[1, 2]"),
        "rescorer.json",
        "json",
        "want an object, found a list",
    ),
    "older format": (
        lambda f: edit_manifest(f, lambda d: d.__setitem__("format", "errorseq-site-rescorer/2")),
        "rescorer.json",
        "format",
        "written by an older errorseq",
    ),
    "other version": (
        lambda f: edit_manifest(f, set_version),
        "rescorer.json",
        "version",
        "this errorseq reads version 3",
    ),
    "missing part": (
        lambda f: (f / "tree.npz").unlink(),
        "tree.npz",
        "files",
        "missing: rescorer.json lists it",
    ),
    "unknown extra file": (
        lambda f: (f / "notes.txt").write_text("hi"),
        "notes.txt",
        "files",
        "not listed in rescorer.json",
    ),
    "thresholds a list": (
        lambda f: edit_manifest(f, lambda d: d.__setitem__("thresholds", [])),
        "rescorer.json",
        "thresholds",
        "want an object, found a list",
    ),
    "a threshold a string": (
        lambda f: edit_manifest(f, lambda d: d["thresholds"]["tree"].__setitem__("donor", "0.5")),
        "rescorer.json",
        "thresholds.tree.donor",
        "want a number, found a string",
    ),
    "settings a list": (
        lambda f: edit_manifest(f, lambda d: d.__setitem__("settings", [25])),
        "rescorer.json",
        "settings",
        "want an object, found a list",
    ),
    "files an object of lists": (
        lambda f: edit_manifest(f, lambda d: d["files"].__setitem__("tree.npz", ["abc"])),
        "rescorer.json",
        "files.tree.npz",
        "want a sha256",
    ),
    "a file outside the folder": (
        lambda f: edit_manifest(f, lambda d: d["files"].__setitem__("../tree.npz", "0" * 64)),
        "rescorer.json",
        "files.../tree.npz",
        "not a plain file name",
    ),
    "unknown key": (
        lambda f: edit_manifest(f, lambda d: d.__setitem__("code", "import os")),
        "rescorer.json",
        "rescorer.code",
        "unknown key",
    ),
    "missing key": (
        lambda f: edit_manifest(f, lambda d: d.pop("thresholds")),
        "rescorer.json",
        "rescorer.thresholds",
        "missing",
    ),
    "tree of another feature count": (
        lambda f: edit_manifest(f, lambda d: d["tree"].__setitem__("n_features", 105)),
        "rescorer.json",
        "tree.n_features",
        "the tree takes 105 features, this run builds 103",
    ),
    "a pickle as the tree": (
        lambda f: swap_file(f, "tree.npz", pickle.dumps({"a": np.ones(3)})),
        "tree.npz",
        "tree",
        "not arrays of numbers",
    ),
    "a tree that loops": (
        lambda f: swap_file(f, "tree.npz", tree_arrays_with(f, left=backwards_child)),
        "tree.npz",
        "left",
        "a child outside its tree or before its node",
    ),
    "a tree of another dtype": (
        lambda f: swap_file(f, "tree.npz", tree_arrays_with(f, value=lambda v: v.astype(np.float32))),
        "tree.npz",
        "value",
        "want a 1-D float64 array",
    ),
}


@pytest.mark.parametrize("damage, name, field, message", REFUSED.values(), ids=REFUSED.keys())
def test_a_damaged_or_foreign_rescorer_is_refused_in_one_line(source, tmp_path, damage, name, field, message):
    folder = saved(source, tmp_path / "rescorer")
    damage(folder)
    with pytest.raises(InputError) as refused:
        load_rescorer(str(folder), settings())
    assert "\n" not in str(refused.value)
    assert (Path(refused.value.source).name, refused.value.field) == (name, field), str(refused.value)
    assert message in refused.value.message, str(refused.value)


@pytest.mark.parametrize(
    "changed, field",
    [
        ({"flank": 10}, "settings.flank"),
        ({"floor": 0.01}, "settings.floor"),
        ({"peak_radius": 3}, "settings.peak_radius"),
        ({"consensus_window": 5}, "settings.consensus_window"),
    ],
)
def test_a_rescorer_of_other_feature_settings_is_refused_naming_the_setting(source, tmp_path, changed, field):
    folder = saved(source, tmp_path / "rescorer")
    with pytest.raises(InputError, match="the tree's features would differ") as refused:
        load_rescorer(str(folder), settings(**changed))
    assert refused.value.field == field and refused.value.source == str(folder / "rescorer.json")


def remote_code(folder: Path) -> None:
    config = json.loads((folder / "fold2.json").read_text())
    config["tokenizer"] = {"kind": "hf", "path": "/tmp/evil", "trust_remote_code": True}
    swap_file(folder, "fold2.json", json.dumps(config).encode())


def other_window(folder: Path) -> None:
    config = json.loads((folder / "fold1.json").read_text())
    config["window"]["length"] = 21
    swap_file(folder, "fold1.json", json.dumps(config).encode())


def other_shape(folder: Path) -> None:
    import safetensors.torch

    state = {name: torch.zeros(1) for name in tiny_state(1)}
    swap_file(folder, "fold1.safetensors", safetensors.torch.save(state))


def pickled_weights(folder: Path) -> None:
    buffer = io.BytesIO()
    torch.save(tiny_state(1), buffer)
    swap_file(folder, "fold1.safetensors", buffer.getvalue())


DEEP_REFUSED = {
    "a window of another length": (other_window, "fold1.json", "window", "want length 2 * flank + 1"),
    "remote code": (remote_code, "fold2.json", "tokenizer.trust_remote_code", "may not run code"),
    "torch pickle as weights": (pickled_weights, "fold1.safetensors", "weights", "not safetensors"),
    "tensors of another shape": (other_shape, "fold1.safetensors", "model", "does not fit the model"),
}


@pytest.mark.parametrize("damage, name, field, message", DEEP_REFUSED.values(), ids=DEEP_REFUSED.keys())
def test_deep_models_are_checked_before_any_candidate_is_scored(
    deep_source, tmp_path, damage, name, field, message
):
    folder = saved(deep_source, tmp_path / "rescorer")
    damage(folder)
    with pytest.raises(InputError) as refused:
        loaded = load_rescorer(str(folder), settings())
        trained_models(loaded.deep, 4, str(folder))
    assert "\n" not in str(refused.value)
    assert refused.value.source.endswith(name) and refused.value.field == field, str(refused.value)
    assert message in refused.value.message, str(refused.value)


# ---- pickles: refused unread -------------------------------------------------------------------
class RunsACommand:
    """A pickle whose loading runs `touch marker` (what a hostile rescorer.pkl would do)."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


@pytest.fixture
def hostile(tmp_path) -> tuple[Path, Path]:
    marker = tmp_path / "pwned"
    path = tmp_path / "rescorer.pkl"
    path.write_bytes(pickle.dumps({"format": "errorseq-site-rescorer/2", "rescorer": RunsACommand(marker)}))
    return path, marker


def test_a_pickle_given_as_the_rescorer_is_refused_and_its_code_never_runs(hostile):
    path, marker = hostile
    with pytest.raises(InputError) as refused:
        load_rescorer(str(path), settings())
    assert refused.value.field == "sites.transfer" and "a pickle" in refused.value.message
    assert "convert_rescorer" in refused.value.message and "\n" not in str(refused.value)
    assert not marker.exists()


def test_site_calls_refuses_the_pickle_first_in_one_line_and_runs_nothing(hostile, tmp_path):
    """Before any input is read: the scores and sites named here do not exist."""
    path, marker = hostile
    config = json.dumps(
        {
            "calling": {"threshold": 0.5, "consensus_window": 2},
            "sites": {},
            "window": {"flank": 50},
            "evaluate": {},
        }
    )
    missing = str(tmp_path / "missing")
    argv = ["--config", config, "--scores", missing, "--sites", missing, "--genes", missing]
    argv += ["--gene-clusters", missing, "--genome", missing, "--transfer", str(path)]
    for output in ("calls", "tree-bed", "base-bed", "metrics", "rescorer", "errorseq-bed"):
        argv += [f"--out-{output}", str(tmp_path / "out" / output)]
    done = subprocess.run(
        [sys.executable, "-m", "workflow_scripts.rules.site_calls", *argv],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [done.stderr.strip()], done.stderr
    assert f"errorseq: error: {path}: sites.transfer: a pickle" in done.stderr
    assert not marker.exists() and not (tmp_path / "out").exists()


def test_a_pickle_inside_the_folder_is_refused_and_its_code_never_runs(source, tmp_path):
    marker = tmp_path / "pwned"
    folder = saved(source, tmp_path / "rescorer")
    swap_file(folder, "tree.npz", pickle.dumps(RunsACommand(marker)))
    with pytest.raises(InputError, match="not arrays of numbers"):
        load_rescorer(str(folder), settings())
    assert not marker.exists()


def test_the_converter_refuses_a_pickle_that_calls_anything_else(hostile):
    path, marker = hostile
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "workflow_scripts.sites.convert_rescorer",
            str(path),
            str(path.parent / "new"),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "which no rescorer.pkl holds: not converted (nothing was run)" in done.stderr
    assert not marker.exists() and not (path.parent / "new").exists()


def an_old_rescorer_pkl(path: Path, found, thresholds: dict) -> HistGradientBoostingClassifier:
    """A rescorer.pkl as site_calls wrote it before the folder: the scikit-learn tree itself and
    the fold models' model.pt bytes, pickled with the Rescorer and DeepModels records."""
    from workflow_scripts.sites.rescorer import Rescorer

    labels = found.table["is_true_site"].to_numpy()
    estimator = HistGradientBoostingClassifier(max_iter=20, early_stopping=False, random_state=0)
    estimator.fit(found.features, labels)
    buffer = io.BytesIO()
    torch.save(tiny_state(1), buffer)
    deep = object.__new__(DeepModels)  # the old record's fields: model.pt bytes, model.json
    object.__setattr__(deep, "__dict__", {"weights": (buffer.getvalue(),), "configs": (tiny_model_json(),)})
    chosen = {"flank": 25, "floor": 0.005, "peak_radius": 2, "consensus_window": 2}
    old = Rescorer(estimator, 0.5, thresholds, chosen, {"source": "chr1", "source_sites": 1}, deep)
    payload = {"format": "errorseq-site-rescorer/2", "sklearn": "1.9.1", "rescorer": old}
    path.write_bytes(pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL))
    return estimator


def test_the_converter_turns_an_old_pickle_into_a_folder_that_scores_the_same(deep_source, tmp_path):
    from workflow_scripts.sites.convert_rescorer import main

    found = fitted(seed=0)[0]
    estimator = an_old_rescorer_pkl(tmp_path / "rescorer.pkl", found, deep_source.thresholds)
    main([str(tmp_path / "rescorer.pkl"), str(tmp_path / "converted")])
    loaded = load_rescorer(str(tmp_path / "converted"), settings())
    probe = fitted(seed=2)[0].features
    assert np.array_equal(loaded.probability(probe), estimator.predict_proba(probe)[:, 1])
    assert loaded.thresholds == deep_source.thresholds
    assert all(torch.equal(loaded.deep.states[0][name], tensor) for name, tensor in tiny_state(1).items())
    manifest = json.loads((tmp_path / "converted/rescorer.json").read_text())
    assert manifest["packages"]["converted_from"]["path"] == "rescorer.pkl"  # a name: no machine path


# ---- at DAG time ---------------------------------------------------------------------------------
@pytest.fixture
def scores_run(tmp_path, monkeypatch):
    """A calling.start scores run's inputs (site_calls would run), in the working directory."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "genes.gtf").write_text('chr1\tx\texon\t1\t4\t.\t+\t.\tgene_id "g"; transcript_id "t";\n')
    (tmp_path / "s.tsv").write_text(
        "gene_id\tchrom\tstrand\tposition\tdonor\tacceptor\ng\tchr1\t+\t1\t0\t0\n"
    )
    return tmp_path


def preflight(transfer: str, **sites) -> None:
    calling = complete_section("calling", {"start": "scores", "annotation": "genes.gtf", "scores": "s.tsv"})
    check_input_files(
        {
            "calling": calling,
            "train": section_defaults("train"),
            "sites": complete_section("sites", {"transfer": transfer, **sites}),
        }
    )


def test_the_workflow_checks_the_transfer_rescorer_while_it_parses(source, scores_run, hostile):
    saved(source, scores_run / "source")
    preflight("source", flank=25, floor=0.005, peak_radius=2)  # the fixture's settings: passes
    with pytest.raises(InputError) as refused:
        preflight("source", flank=30, floor=0.005, peak_radius=2)
    assert refused.value.field == "settings.flank"
    (scores_run / "source" / "tree.npz").write_bytes(b"changed")
    with pytest.raises(InputError, match="differs from the one in rescorer.json"):
        preflight("source", flank=25, floor=0.005, peak_radius=2)
    with pytest.raises(InputError, match="a pickle"):
        preflight(str(hostile[0]))
    assert not hostile[1].exists()
