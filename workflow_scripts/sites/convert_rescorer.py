"""Convert a rescorer.pkl (site_calls before the re-scorer folder) into a re-scorer folder, once.

    python -m workflow_scripts.sites.convert_rescorer OLD.pkl NEW_FOLDER

THIS UNPICKLES OLD.pkl. Loading a pickle can run any code it carries: convert only a
rescorer.pkl you wrote yourself with errorseq's site_calls, never one you were sent. As a safety
net the unpickler may only build what a rescorer.pkl holds (scikit-learn's gradient-boosted tree
and its parts, numpy arrays and random states, errorseq's two records) and refuses any other
name in one line; the deep models' weights are read as tensors only (torch weights_only). The
folder it writes (sites/rescorer_files.py) is plain data: sites.transfer reads it without
unpickling anything. This is the only module of errorseq that unpickles
(tests/unit/test_no_pickle_loading.py).

The converted tree's arrays pass the checks a re-scorer's tree.npz passes (sites/tree_arrays.py:
children after their node, one parent each, a bounded size) before either tree is walked, so a
pickled tree that loops back to its root is refused, not walked forever; then it must give the
same probabilities, bit for bit, as the pickled scikit-learn tree on probe features (random
values with missing ones), and the manifest the same checks as a re-scorer's
(sites/rescorer_checks.py), before anything is written.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import pickle
import sys
from importlib import metadata
from pathlib import Path

import numpy as np

from workflow_scripts.calling.tensor_checks import check_finite, checked_storage
from workflow_scripts.errors import InputError, run_cli
from workflow_scripts.file_headers import zip_entries
from workflow_scripts.sites.deep_transfer import DeepModels
from workflow_scripts.sites.predictors import ERRORSEQ
from workflow_scripts.sites.rescorer import Rescorer
from workflow_scripts.sites.rescorer_files import save_rescorer
from workflow_scripts.sites.tree_arrays import TreeEnsemble, checked_ensemble

OLD_FORMAT = "errorseq-site-rescorer/2"
PROBE_ROWS = 4096
HGB = "sklearn.ensemble._hist_gradient_boosting"
ALLOWED = {  # (module, name) a rescorer.pkl of errorseq-site-rescorer/2 refers to
    (f"{HGB}.gradient_boosting", "HistGradientBoostingClassifier"),
    (f"{HGB}.predictor", "TreePredictor"),
    (f"{HGB}.binning", "_BinMapper"),
    ("sklearn._loss.loss", "HalfBinomialLoss"),
    ("sklearn._loss._loss", "CyHalfBinomialLoss"),
    ("sklearn._loss.link", "LogitLink"),
    ("sklearn._loss.link", "Interval"),
    ("sklearn.preprocessing._label", "LabelEncoder"),
    ("numpy", "dtype"),
    ("numpy", "ndarray"),
    ("numpy.random._pcg64", "PCG64"),
    ("numpy.random._mt19937", "MT19937"),
    ("numpy.random._pickle", "__generator_ctor"),
    ("numpy.random._pickle", "__bit_generator_ctor"),
    ("numpy.random._pickle", "__randomstate_ctor"),
    ("numpy.random.mtrand", "RandomState"),
    ("numpy.random.bit_generator", "SeedSequence"),
    ("numpy.random.bit_generator", "__pyx_unpickle_SeedSequence"),
    *(
        (f"numpy.{core}.{module}", name)
        for core in ("core", "_core")
        for module, name in (
            ("multiarray", "_reconstruct"),
            ("multiarray", "scalar"),
            ("numeric", "_frombuffer"),
        )
    ),
}


class OldRecord:
    """What an old Rescorer or DeepModels unpickles into: its fields, nothing else."""


RECORDS = {
    ("workflow_scripts.sites.rescorer", "Rescorer"): OldRecord,
    ("workflow_scripts.sites.deep_transfer", "DeepModels"): OldRecord,
}


class RescorerUnpickler(pickle.Unpickler):
    """Builds only what ALLOWED and RECORDS name; any other global is refused."""

    def __init__(self, data: bytes, path: str):
        super().__init__(io.BytesIO(data))
        self.path = path

    def find_class(self, module: str, name: str):
        if (module, name) in RECORDS:
            return RECORDS[module, name]
        if (module, name) not in ALLOWED:
            raise InputError(
                self.path,
                "pickle",
                f"refers to {module}.{name}, which no rescorer.pkl holds: not converted (nothing was run)",
            )
        return super().find_class(module, name)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Convert a rescorer.pkl written by an older site_calls into a re-scorer folder, "
        "once. It UNPICKLES OLD.pkl, and a pickle can run code: convert only a rescorer.pkl you "
        "wrote yourself, never one you were sent.",
    )
    parser.add_argument("old", help="rescorer.pkl written by site_calls (UNPICKLED: only your own)")
    parser.add_argument("new", help="the re-scorer folder to write (must not exist)")
    return parser.parse_args(argv)


def unpickled(path: str) -> tuple[OldRecord, str]:
    """The old Rescorer record and the scikit-learn version that wrote it."""
    data = Path(path).read_bytes()
    try:
        payload = RescorerUnpickler(data, path).load()
    except InputError:
        raise
    except Exception as error:  # a damaged pickle fails in any of pickle's and its classes' ways
        raise InputError(
            path, "pickle", f"not a readable rescorer.pkl ({type(error).__name__}: {error})"
        ) from None
    if not isinstance(payload, dict) or payload.get("format") != OLD_FORMAT:
        raise InputError(path, "format", f"not a site_calls rescorer.pkl of format {OLD_FORMAT}")
    record = payload.get("rescorer")
    if not isinstance(record, OldRecord):
        raise InputError(path, "rescorer", "no Rescorer record in it")
    return record, str(payload.get("sklearn"))


def converted_tree(estimator, path: str) -> TreeEnsemble | None:
    """The tree's arrays, after checking they give the estimator's probabilities bit for bit."""
    if estimator is None:
        return None
    try:
        tree = TreeEnsemble.from_estimator(estimator)
    except (AttributeError, ValueError, TypeError) as error:
        raise InputError(path, "tree", f"not a binary gradient-boosted tree ({error})") from None
    tree = checked_ensemble(tree.arrays, tree.n_features, path)  # before any walk: a loop never ends
    probe = np.random.default_rng(0).normal(size=(PROBE_ROWS, tree.n_features)).astype(np.float32)
    probe[np.random.default_rng(1).random(probe.shape) < 0.2] = np.nan
    if not np.array_equal(tree.probability(probe), estimator.predict_proba(probe)[:, 1]):
        raise InputError(path, "tree", "the converted tree's probabilities differ from the pickled tree's")
    return tree


def converted_models(deep: OldRecord | None, path: str) -> DeepModels | None:
    """model.pt bytes of each fold read as tensors only (weights_only), their model.json as they were."""
    if deep is None:
        return None
    import torch

    fields, states = vars(deep), []
    for fold, weights in enumerate(fields.get("weights", ()), 1):
        where = f"{path}: deep model {fold}"
        zip_entries(bytes(weights), where)  # its sizes against its bytes, before torch reads it
        try:
            state = torch.load(io.BytesIO(weights), map_location="cpu", weights_only=True)
        except (pickle.UnpicklingError, RuntimeError, EOFError, TypeError) as error:
            reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            raise InputError(path, f"deep model {fold}", f"not tensors only ({reason})") from None
        if not isinstance(state, dict) or not all(
            isinstance(value, torch.Tensor) for value in state.values()
        ):
            raise InputError(path, f"deep model {fold}", "not a state dict of tensors")
        checked_storage(state, where)
        check_finite(state, where)
        states.append(state)
    return DeepModels(tuple(states), tuple(fields.get("configs", ())))


def convert(old: str, new: str) -> Rescorer:
    if Path(new).exists():
        raise InputError(new, "new", "exists already: give a folder that does not")
    record, sklearn_version = unpickled(old)
    fields = vars(record)
    for name in ("tree", "constant", "thresholds", "settings", "source"):
        if name not in fields:
            raise InputError(old, f"rescorer.{name}", "missing: not a site_calls rescorer.pkl")
    rescorer = Rescorer(
        tree=converted_tree(fields["tree"], old),
        constant=float(fields["constant"]),
        thresholds={name: dict(by_type) for name, by_type in fields["thresholds"].items()},
        settings=dict(fields["settings"]),
        source=dict(fields["source"]),
        deep=converted_models(fields.get("deep"), old) if ERRORSEQ in fields["thresholds"] else None,
    )
    digest = hashlib.sha256(Path(old).read_bytes()).hexdigest()
    packages = {
        "converted_from": {"path": Path(old).name, "sha256": digest, "scikit-learn": sklearn_version},
        **{name: metadata.version(name) for name in ("numpy", "scikit-learn")},
    }
    save_rescorer(rescorer, new, packages, {"note": "converted from a rescorer.pkl, which kept no results"})
    return rescorer


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    rescorer = convert(args.old, args.new)
    models = len(rescorer.deep.states) if rescorer.deep is not None else 0
    print(f"{args.new}: the tree, thresholds and {models} deep models of {args.old}", file=sys.stderr)


if __name__ == "__main__":
    run_cli(main)
