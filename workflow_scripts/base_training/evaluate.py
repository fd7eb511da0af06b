"""evaluate_base: base models scored on base_data's held-out test blocks with OpenSpliceAI's metrics
(metrics.py), side by side, the first model the reference (the start weights) and each other one's
differences from it with 95% intervals from a bootstrap over the split units (gene clusters).
Site F1 is counted at the fixed threshold and, where validation blocks were scored, at each model's
own threshold, the one its site F1 on the validation blocks is best at (`pick_thresholds`): a
fine-tuned model's calibration moves, and the validation genes, never the test's, say where to.

A model is a folder of OpenSpliceAI state dicts (`model_<context>nt_rs<seed>.pt`, as OpenSpliceAI
and errorseq's train_base write them), scored as the mean of its files (the ensemble), with
errorseq's own network (calling/openspliceai.py). A model of context C reads the block's core and
C/2 nt of its flanks each side (the block carries base_data's context/2).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl
import torch

from workflow_scripts.base_training.dataset import BaseData
from workflow_scripts.base_training.metrics import CHANNELS, average_precision, site_metrics, top_k_accuracy
from workflow_scripts.base_training.site_f1 import best_threshold, f1_by_threshold, f1_of, unit_counts
from workflow_scripts.calling.openspliceai import OpenSpliceAIModel, load_openspliceai
from workflow_scripts.errors import InputError
from workflow_scripts.progress import Progress

ONE_HOT = np.vstack([np.eye(4, dtype=np.float32), np.zeros((1, 4), dtype=np.float32)])  # codes 0-3, N = 4


@dataclass
class BaseModel:
    name: str  # the folder's name
    files: list[Path]
    networks: list[OpenSpliceAIModel]

    @property
    def context(self) -> int:
        return 2 * self.networks[0].flank_left


def group_by_folder(weights: Sequence[str | Path]) -> dict[Path, list[Path]]:
    groups: dict[Path, list[Path]] = {}
    for path in map(Path, weights):
        if path.suffix != ".pt":
            raise InputError(path, "evaluate_base.models", "an OpenSpliceAI state dict (.pt) is needed here")
        groups.setdefault(path.parent, []).append(path)
    return groups


def load_models(weights: Sequence[str | Path], device: torch.device) -> list[BaseModel]:
    """One model per folder among `weights`, in the order the folders come first."""
    groups = group_by_folder(weights)
    names = [folder.name for folder in groups]
    models = []
    for folder, files in groups.items():
        name = folder.name if names.count(folder.name) == 1 else f"{folder.parent.name}/{folder.name}"
        networks = [load_openspliceai(path).to(device) for path in sorted(files)]
        contexts = {2 * net.flank_left for net in networks}
        if len(contexts) > 1:
            raise InputError(
                folder,
                "evaluate_base.models",
                f"models of several contexts in one folder: {sorted(contexts)}",
            )
        models.append(BaseModel(name, sorted(files), networks))
    return models


@torch.no_grad()
def block_probabilities(
    model: BaseModel, codes: np.ndarray, half_context: int, device: torch.device
) -> np.ndarray:
    """(core length, 3) mean probabilities [neither, acceptor, donor] of the model's networks on one
    block (its codes in reading direction, `half_context` nt of flank each side)."""
    crop = half_context - model.context // 2
    if crop < 0:
        raise InputError(
            model.name, "context", f"{model.context:,} nt needs base_data.context >= {model.context:,}"
        )
    window = codes[crop : len(codes) - crop] if crop else codes
    x = torch.from_numpy(ONE_HOT[np.asarray(window)].T.copy())[None].to(device)
    total = sum(net(x)[0] for net in model.networks)
    return (total / len(model.networks)).T.float().cpu().numpy()


@dataclass
class Scored:
    labels: np.ndarray  # (n,) 0/1/2 of the test cores' labelled positions
    units: np.ndarray  # (n,) the split unit (gene cluster) of each position, renumbered 0..
    blocks: np.ndarray  # (n,) the block of each position (site calls never reach across blocks)
    probabilities: dict[str, np.ndarray]  # model name -> (n, 3)

    @property
    def n_units(self) -> int:
        return int(self.units.max()) + 1 if self.units.size else 0


@dataclass(frozen=True)
class SiteCalls:
    """errorseq's site F1 (site_f1.py): threshold fixed before the test, TP window, peak radius."""

    threshold: float
    window: int
    peak_radius: int

    def counts(self, scored: Scored, name: str) -> np.ndarray:
        return unit_counts(
            scored.labels,
            scored.probabilities[name],
            scored.blocks,
            scored.units,
            scored.n_units,
            self.threshold,
            self.window,
            self.peak_radius,
        )


def test_blocks(data: BaseData, max_blocks: int | None, split: str = "test") -> pl.DataFrame:
    test = data.blocks.filter(pl.col("split") == split).sort("block")
    if test.height == 0 and split == "test":
        raise InputError("base_data", "split", "no test block: nothing held out to evaluate on")
    return test.head(max_blocks) if max_blocks else test


def score_test_blocks(
    data: BaseData,
    half_context: int,
    models: list[BaseModel],
    device: torch.device,
    max_blocks: int | None,
    log,
    split: str = "test",
) -> Scored:
    """Every model on the first `max_blocks` blocks of `split` (None: all of them)."""
    test = test_blocks(data, max_blocks, split)
    work = int((test["core_end"] - test["core_start"]).sum()) * len(models)
    progress = Progress("evaluate_base", work, "nt", tallies={"blocks": test.height * len(models)}, log=log)
    labels, units, blocks = [], [], []
    probabilities: dict[str, list[np.ndarray]] = {model.name: [] for model in models}
    for row in test.iter_rows(named=True):
        codes, label = data.block(row["block"])
        core = np.asarray(label[half_context : len(label) - half_context])
        keep = core >= 0
        labels.append(core[keep])
        units.append(np.full(int(keep.sum()), row["cluster"], dtype=np.int64))
        blocks.append(np.full(int(keep.sum()), row["block"], dtype=np.int64))
        for model in models:
            probabilities[model.name].append(
                block_probabilities(model, np.asarray(codes), half_context, device)[keep]
            )
            progress.advance(len(core), blocks=1)
    progress.finish()
    _, renumbered = np.unique(np.concatenate(units), return_inverse=True)
    return Scored(
        np.concatenate(labels).astype(np.int64),
        renumbered.astype(np.int64),
        np.concatenate(blocks),
        {name: np.concatenate(parts) for name, parts in probabilities.items()},
    )


def headline(labels: np.ndarray, probabilities: np.ndarray) -> dict[str, float]:
    """Top-1 accuracy and AUPRC per site type: what the differences are reported on."""
    values = {}
    for name, channel in CHANNELS.items():
        truth = labels == channel
        values[f"{name}_top1"] = top_k_accuracy(truth, probabilities[:, channel], (1.0,))["1.0"]
        values[f"{name}_auprc"] = average_precision(truth, probabilities[:, channel])
    return values


def pick_thresholds(validation: Scored, calls: SiteCalls) -> dict[str, float]:
    """Each model's threshold of THRESHOLDS with the best site F1 on the validation blocks (the
    lowest of equals); {} without a validation site."""
    if not (validation.labels > 0).any():
        return {}
    return {
        name: best_threshold(
            f1_by_threshold(validation.labels, scores, validation.blocks, calls.window, calls.peak_radius)
        )
        for name, scores in validation.probabilities.items()
    }


def unit_bootstrap(
    scored: Scored,
    reference: str,
    other: str,
    site_counts: dict[str, dict[str, np.ndarray]],
    replicates: int,
    seed: int,
) -> dict[str, dict]:
    """other - reference of each headline value and of each site F1 (`site_counts`: its name ->
    the per-unit counts of each model), with a 95% interval from resampling the split units
    (gene clusters) with replacement."""
    point_a, point_b = (
        headline(scored.labels, scored.probabilities[reference]),
        headline(scored.labels, scored.probabilities[other]),
    )
    for key, counts in site_counts.items():
        point_a[key], point_b[key] = f1_of(counts[reference])["f1"], f1_of(counts[other])["f1"]
    order = np.argsort(scored.units, kind="stable")
    unique, starts = np.unique(scored.units[order], return_index=True)
    bounds = np.r_[starts, len(order)]
    rng = np.random.default_rng(seed)
    draws: dict[str, list[float]] = {key: [] for key in point_a}
    for _ in range(replicates):
        chosen = rng.integers(0, len(unique), len(unique))
        index = np.concatenate([order[bounds[u] : bounds[u + 1]] for u in chosen])
        a = headline(scored.labels[index], scored.probabilities[reference][index])
        b = headline(scored.labels[index], scored.probabilities[other][index])
        for key, counts in site_counts.items():
            a[key], b[key] = f1_of(counts[reference][chosen])["f1"], f1_of(counts[other][chosen])["f1"]
        for key in draws:
            draws[key].append(b[key] - a[key])
    result = {}
    for key, values in draws.items():
        finite = np.array([v for v in values if np.isfinite(v)])
        low, high = np.quantile(finite, [0.025, 0.975]).tolist() if finite.size else [float("nan")] * 2
        result[key] = {"difference": point_b[key] - point_a[key], "low": low, "high": high}
    return result


def evaluate(
    scored: Scored,
    models: list[BaseModel],
    calls: SiteCalls,
    replicates: int,
    seed: int,
    picked: dict[str, float] | None = None,
) -> dict:
    """The metrics.json payload: each model's metrics and each later model against the first;
    with `picked` (pick_thresholds), site F1 at each model's own threshold too (site_f1_picked)."""
    reference = models[0].name
    site_counts = {"site_f1": {model.name: calls.counts(scored, model.name) for model in models}}
    if picked:
        site_counts["site_f1_picked"] = {
            name: SiteCalls(threshold, calls.window, calls.peak_radius).counts(scored, name)
            for name, threshold in picked.items()
        }
    return {
        "positions": int(scored.labels.size),
        "units": scored.n_units,
        "reference": reference,
        "site_calls": {
            "threshold": calls.threshold,
            "window": calls.window,
            "peak_radius": calls.peak_radius,
        },
        "models": {
            model.name: {
                "files": [path.name for path in model.files],
                "context": model.context,
                **site_metrics(scored.labels, scored.probabilities[model.name]),
                "site_f1": f1_of(site_counts["site_f1"][model.name]),
                **(
                    {
                        "site_f1_picked": {
                            **f1_of(site_counts["site_f1_picked"][model.name]),
                            "threshold": picked[model.name],
                        }
                    }
                    if picked
                    else {}
                ),
            }
            for model in models
        },
        "against_reference": {
            model.name: unit_bootstrap(scored, reference, model.name, site_counts, replicates, seed)
            for model in models[1:]
        },
        "bootstrap_replicates": replicates,
    }
