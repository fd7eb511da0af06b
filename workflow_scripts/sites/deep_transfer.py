"""sites.model's deep models carried in the re-scorer and applied unchanged to another genome.

The source genome's site_calls packs the model of every fold run (site_candidates_fold<i>: its
model.pt read as tensors only, and model.json, as evaluate wrote them) with the per-type
thresholds of their out-of-fold probabilities; the re-scorer folder holds them as safetensors and
JSON (sites/rescorer_files.py). On the other genome every candidate is cut into a window as
site_windows cuts it (the models' window.flank, the base model's score profiles along it),
scored by each fold model with predict's own model building and batching
(inference/predict_calls.py), CHUNK_WINDOWS candidates at a time with a progress line (a whole
chromosome holds hundreds of thousands), and the fold models' probabilities are averaged:
`transfer_errorseq`'s P(true site).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from workflow_scripts.errors import InputError
from workflow_scripts.layout import FoldRunFiles
from workflow_scripts.progress import Console, Progress
from workflow_scripts.sites.candidates import Candidates
from workflow_scripts.sites.inputs import SiteInputs, profiled_windows
from workflow_scripts.sites.rescorer_checks import check_fold_config, window_flank

CHUNK_WINDOWS = 20_000  # candidates scored by one fold model between two progress lines


@dataclass(frozen=True)
class DeepModels:
    """The fold runs' models: weights (name -> torch tensor) and model.json, one pair per fold."""

    states: tuple[dict, ...]
    configs: tuple[dict, ...]

    @property
    def flank(self) -> int:
        return int(self.configs[0]["window"]["flank"])


def read_deep_models(runs: list[FoldRunFiles]) -> DeepModels:
    """The models of sites.model's runs (results/site_candidates_fold<i>/model/): model.pt as
    tensors only (torch weights_only), checked against the sha256 train recorded."""
    from workflow_scripts.evaluation.predict import check_weights_digest, load_state_dict

    states, configs = [], []
    for run in runs:
        saved = json.loads(Path(run.model_config).read_text())
        check_weights_digest(run.weights, saved, run.model_config)
        states.append(load_state_dict(run.weights))
        configs.append(saved)
    flanks = {window_flank(config, run.model_config) for config, run in zip(configs, runs)}
    if len(flanks) != 1:
        raise InputError(runs[0].run, "window.flank", f"the fold runs' models differ: {sorted(flanks)}")
    return DeepModels(tuple(states), tuple(configs))


def trained_models(models: DeepModels, batch_size: int, source: str) -> list:
    """Each fold's model built from its model.json and holding its weights (predict's own
    TrainedModel), checked before any candidate is scored: the tensors must fit the model."""
    from workflow_scripts.inference.predict_calls import TrainedModel

    built = []
    for fold, (state, config) in enumerate(zip(models.states, models.configs, strict=True), 1):
        check_fold_config(config, f"{source}: fold{fold}.json")
        built.append(
            TrainedModel.from_weights(
                state, config, batch_size, f"{source}: fold{fold}.safetensors", f"{source}: fold{fold}.json"
            )
        )
    return built


def transferred_probability(
    models: list,
    flank: int,
    found: Candidates,
    inputs: SiteInputs,
    source: str,
    label: str = "deep models",
    console: Console | None = None,
) -> np.ndarray:
    """The fold models' (`trained_models`) mean P(true site) of every candidate of this genome,
    in table order; progress as `label` in the log (and on `console`)."""
    windows, _ = profiled_windows(found, inputs, flank)
    progress = Progress(
        label,
        len(models) * windows.height,
        "windows",
        tallies={"fold_models": len(models), "windows": len(models) * windows.height},
        rate_of="windows",
        console=console,
    )
    probabilities = []
    for model in models:
        parts = []
        for start in range(0, windows.height, CHUNK_WINDOWS):
            chunk = windows.slice(start, CHUNK_WINDOWS)
            features, profiles = model.features(chunk, source), model.profiles(chunk, source)
            sequences, lengths = chunk["sequence"].to_list(), chunk["length"].to_numpy()
            parts.append(model.p_error(sequences, lengths, features, profiles))
            progress.advance(chunk.height, windows=chunk.height)
        probabilities.append(np.concatenate(parts) if parts else np.empty(0))
        progress.advance(0, fold_models=1)
    progress.finish(last=False)
    return np.mean(probabilities, axis=0) if probabilities else np.empty(0)
