"""sites.model's deep models carried in rescorer.pkl and applied unchanged to another genome.

The source genome's site_calls packs the model of every fold run (site_candidates_fold<i>:
model.pt and model.json, as evaluate wrote them) with the per-type thresholds of their
out-of-fold probabilities. On the other genome every candidate is cut into a window as
site_windows cuts it (the models' window.flank, the base model's score profiles along it),
scored by each fold model with predict's own loading and batching (inference/predict_calls.py),
and the fold models' probabilities are averaged: `transfer_errorseq`'s P(true site).
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from workflow_scripts.errors import InputError
from workflow_scripts.sites.candidates import Candidates
from workflow_scripts.sites.inputs import SiteInputs, profiled_windows


@dataclass(frozen=True)
class DeepModels:
    """The fold runs' models: weights (model.pt bytes) and model.json, one pair per fold."""

    weights: tuple[bytes, ...]
    configs: tuple[dict, ...]

    @property
    def flank(self) -> int:
        return int(self.configs[0]["window"]["flank"])


def read_deep_models(run_dirs: list[str]) -> DeepModels:
    """The models of sites.model's runs (results/site_candidates_fold<i>/model/)."""
    weights, configs = [], []
    for run in map(Path, run_dirs):
        weights.append((run / "model/model.pt").read_bytes())
        configs.append(json.loads((run / "model/model.json").read_text()))
    flanks = {int(config["window"]["flank"]) for config in configs}
    if len(flanks) != 1:
        raise InputError(run_dirs[0], "window.flank", f"the fold runs' models differ: {sorted(flanks)}")
    return DeepModels(tuple(weights), tuple(configs))


def transferred_probability(
    models: DeepModels, found: Candidates, inputs: SiteInputs, batch_size: int, source: str
) -> np.ndarray:
    """The fold models' mean P(true site) of every candidate of this genome, in table order."""
    from workflow_scripts.inference.predict_calls import TrainedModel

    windows, _ = profiled_windows(found, inputs, models.flank)
    sequences, lengths = windows["sequence"].to_list(), windows["length"].to_numpy()
    probabilities = []
    with tempfile.TemporaryDirectory(prefix="errorseq-transfer-") as folder:
        for fold, (weights, config) in enumerate(zip(models.weights, models.configs, strict=True), 1):
            model_path, config_path = Path(folder) / f"fold{fold}.pt", Path(folder) / f"fold{fold}.json"
            model_path.write_bytes(weights)
            config_path.write_text(json.dumps(config))
            model = TrainedModel(str(model_path), str(config_path), batch_size)
            features, profiles = model.features(windows, source), model.profiles(windows, source)
            probabilities.append(model.p_error(sequences, lengths, features, profiles))
    return np.mean(probabilities, axis=0) if probabilities else np.empty(0)
