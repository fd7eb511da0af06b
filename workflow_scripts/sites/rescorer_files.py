"""The re-scorer on disk: a folder of plain data that sites.transfer loads without running code.

    rescorer.json          the manifest (sites/rescorer_manifest.py): format and version, the
                           feature settings, the per-type thresholds, the tree, the deep models,
                           the source genome with its base model's files and sha256, the package
                           versions, the results measured there, and every other file's sha256
    tree.npz               the profile tree as arrays (sites/tree_arrays.py), numbers only
    fold<i>.safetensors    sites.model's fold models: tensors only
    fold<i>.json           ... and the model.json of each

Nothing here unpickles: JSON, npz read with allow_pickle=False, safetensors. `load_rescorer`
checks every part before any is used: the manifest and every file's sha256 (read_manifest), then
the tree's arrays node by node (tree_arrays.checked_ensemble), and each deep model's tensors and
window; each refusal is one InputError naming the file and the field. A file that is not such a
folder (the pickle rescorer.pkl of older versions among them) is refused unread;
sites/convert_rescorer.py converts a pickle you wrote, once.
"""

from __future__ import annotations

import io
import json
import math

import numpy as np

from workflow_scripts.calling.scores import SPLICE_TYPES
from workflow_scripts.calling.tensor_checks import check_finite
from workflow_scripts.errors import InputError
from workflow_scripts.io_utils import atomic_folder
from workflow_scripts.json_fields import exact_keys, field
from workflow_scripts.sites.candidates import feature_names
from workflow_scripts.sites.deep_transfer import DeepModels
from workflow_scripts.sites.predictors import BASE_TUNED, ERRORSEQ, TREE
from workflow_scripts.sites.rescorer import Rescorer
from workflow_scripts.sites.rescorer_checks import (
    DIGEST,
    check_fold_config,
    check_results,
    check_source,
    check_thresholds,
    manifest_digest,
    window_flank,
)
from workflow_scripts.sites.rescorer_manifest import (
    FEATURE_SETTINGS,
    FORMAT,
    MANIFEST,
    TREE_FILE,
    VERSION,
    Manifest,
    parse_json,
    read_manifest,
    sha256,
)
from workflow_scripts.sites.settings import SiteSettings
from workflow_scripts.sites.tree_arrays import TreeEnsemble, checked_ensemble


# ---- writing -------------------------------------------------------------------------------------
def tree_bytes(tree: TreeEnsemble) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **tree.arrays)  # type: ignore[arg-type]  # numpy's stub types the keyword allow_pickle only
    return buffer.getvalue()


def deep_model_files(deep: DeepModels) -> dict[str, bytes]:
    import safetensors.torch

    files = {}
    for fold, (state, config) in enumerate(zip(deep.states, deep.configs, strict=True), 1):
        tensors = {name: tensor.detach().contiguous().clone() for name, tensor in state.items()}
        files[f"fold{fold}.safetensors"] = safetensors.torch.save(tensors)
        files[f"fold{fold}.json"] = (json.dumps(config, indent=2) + "\n").encode()
    return files


def json_thresholds(thresholds: dict[str, dict[str, float]]) -> dict:
    """inf (no site to tune on) as null, so the manifest is standard JSON."""
    return {
        name: {t: value if math.isfinite(value) else None for t, value in by_type.items()}
        for name, by_type in thresholds.items()
    }


def manifest(rescorer: Rescorer, files: dict[str, bytes], packages: dict, results: dict) -> dict:
    deep = rescorer.deep
    folds = range(1, len(deep.states) + 1) if deep is not None else range(0)
    return {
        "format": FORMAT,
        "version": VERSION,
        "settings": rescorer.settings,
        "thresholds": json_thresholds(rescorer.thresholds),
        "tree": {
            "file": TREE_FILE if rescorer.tree is not None else None,
            "n_features": rescorer.tree.n_features if rescorer.tree is not None else None,
            "trees": rescorer.tree.n_trees if rescorer.tree is not None else 0,
            "constant": None if rescorer.tree is not None else rescorer.constant,
        },
        "deep_models": [{"weights": f"fold{i}.safetensors", "config": f"fold{i}.json"} for i in folds],
        "source": rescorer.source,
        "packages": packages,
        "results": results,
        "files": {name: sha256(data) for name, data in sorted(files.items())},
    }


def check_written(document: dict, files: dict[str, bytes], source: str) -> None:
    """What the writer is about to record passes the reader's value checks (a converted pickle's
    thresholds and facts above all)."""
    check_thresholds(document["thresholds"], source)
    check_source(document["source"], source)
    check_results(document["results"], source)
    for name, data in files.items():
        if name.endswith(".json"):
            check_fold_config(parse_json(data, name), name)


def save_rescorer(rescorer: Rescorer, folder: str, packages: dict, results: dict) -> None:
    """The re-scorer folder, written whole under a temporary name and renamed into place."""
    files = {TREE_FILE: tree_bytes(rescorer.tree)} if rescorer.tree is not None else {}
    if rescorer.deep is not None:
        files.update(deep_model_files(rescorer.deep))
    document = manifest(rescorer, files, packages, results)
    check_written(document, files, MANIFEST)
    document[DIGEST] = manifest_digest(document)
    files[MANIFEST] = (json.dumps(document, indent=2, allow_nan=False) + "\n").encode()
    with atomic_folder(folder) as tmp:
        for name, data in files.items():
            (tmp / name).write_bytes(data)


# ---- reading -------------------------------------------------------------------------------------
def load_rescorer(path: str, settings: SiteSettings) -> Rescorer:
    """The re-scorer folder at `path`, every part checked (module docstring) before use."""
    here = {key: getattr(settings, key) for key in FEATURE_SETTINGS}
    found = read_manifest(path, here, len(feature_names(settings.flank)))
    document = found.document
    tree, constant = read_tree(found)
    deep = read_deep_models(found)
    thresholds = read_thresholds(document["thresholds"], deep is not None, found.source)
    return Rescorer(tree, constant, thresholds, here, document["source"], deep)


def read_tree(found: Manifest) -> tuple[TreeEnsemble | None, float]:
    """The tree, its arrays checked node by node, or the constant probability of a source whose
    candidates were of one class."""
    part = found.document["tree"]
    if part["file"] is None:
        return None, float(part["constant"])
    path = str(found.folder / part["file"])
    try:
        with np.load(io.BytesIO(found.contents[part["file"]]), allow_pickle=False) as stored:
            arrays = {name: stored[name] for name in stored.files}
    except (ValueError, OSError, EOFError) as error:
        raise InputError(path, "tree", f"not arrays of numbers ({str(error).splitlines()[0]})") from None
    tree = checked_ensemble(arrays, part["n_features"], path)
    if tree.n_trees != part["trees"]:
        raise InputError(found.source, "tree.trees", f"{part['trees']}, the arrays hold {tree.n_trees} trees")
    return tree, math.nan


def read_deep_models(found: Manifest) -> DeepModels | None:
    """The fold models' tensors and model.json, all of one window; None: the source ran no
    sites.model."""
    listed = found.document["deep_models"]
    if not listed:
        return None
    import safetensors.torch

    states, configs, flanks = [], [], set()
    for entry in listed:
        weights_path, config_path = (str(found.folder / entry[key]) for key in ("weights", "config"))
        config = parse_json(found.contents[entry["config"]], config_path)
        flanks.add(window_flank(config, config_path))
        try:
            state = safetensors.torch.load(found.contents[entry["weights"]])
        except Exception as error:  # safetensors' SafetensorError derives from Exception alone
            raise InputError(weights_path, "weights", f"not safetensors ({error})") from None
        check_finite(state, weights_path)
        states.append(state)
        configs.append(config)
    if len(flanks) != 1:
        raise InputError(
            found.source, "deep_models", f"the fold models' windows differ: flanks {sorted(flanks)}"
        )
    return DeepModels(tuple(states), tuple(configs))


def read_thresholds(part: dict, has_deep: bool, source: str) -> dict[str, dict[str, float]]:
    """{predictor: {splice type: threshold}}; null (no site to tune on there) is inf."""
    names = {BASE_TUNED, TREE} | ({ERRORSEQ} if has_deep else set())
    exact_keys(part, names, source, "thresholds")
    thresholds = {}
    for name in sorted(names):
        by_type = part[name]
        exact_keys(by_type, set(SPLICE_TYPES), source, f"thresholds.{name}")
        thresholds[name] = {
            t: math.inf if by_type[t] is None else field(by_type, t, float, source, f"thresholds.{name}")
            for t in SPLICE_TYPES
        }
    return thresholds
