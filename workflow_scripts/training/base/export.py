"""What a finished train_base run leaves in the models folder (rank 0): the state dict in
OpenSpliceAI's format (model_<context>nt_rs<seed>.pt: its keys, fp32, a plain dict of tensors that
`torch.load(weights_only=True)` reads and OpenSpliceAI's own SpliceAI class loads), its provenance
(the start weights', data files' and the model's sha256, the split, the seed, the settings) and a
model card. Each file is written atomically. train_base.export picks the epoch: the last, or the
trained epoch of the best validation loss or AUPRC (its weights, kept in the run's epochs/ folder)."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import torch

from workflow_scripts.config.train_base import TrainBaseSection
from workflow_scripts.errors import InputError
from workflow_scripts.io_utils import atomic_path, sha256_file, write_json, write_text
from workflow_scripts.training.base.blocks import read_manifest
from workflow_scripts.training.base.loop import BaseTrainer
from workflow_scripts.training.base.network import exported_state
from workflow_scripts.training.checkpoint import save_tensors

PROVENANCE_FORMAT = 1


def validation_score(record: dict, rule: str) -> float:
    """Higher is better: minus the validation loss, or the mean of the two AUPRCs (NaN: lowest)."""
    value = (
        -record["val_loss"]
        if rule == "best_val_loss"
        else (record["acceptor_auprc"] + record["donor_auprc"]) / 2
    )
    return value if math.isfinite(value) else -math.inf


def chosen_epoch(history: list[dict], rule: str) -> dict | None:
    """The validation record of the epoch train_base.export picks (None: the last weights); the
    start weights (epoch 0) never, the earliest of equals."""
    if rule == "last":
        return None
    trained = [record for record in history if record["epoch"] >= 1]
    if not trained:
        raise InputError("config", "train_base.export", f"{rule} needs a validation after a trained epoch")
    return max(trained, key=lambda record: (validation_score(record, rule), -record["epoch"]))


def export(trainer: BaseTrainer, state: dict[str, torch.Tensor]) -> None:
    run, section = trainer.run, trainer.section
    chosen = chosen_epoch(trainer.position.history, section.export)
    with atomic_path(run.out_model) as tmp:
        if chosen is None:
            save_tensors(exported_state(state), tmp)
        else:  # the weights epoch_done kept after that epoch, as they are
            shutil.copyfile(run.epoch_model(section.context, chosen["epoch"]), tmp)
        model_sha = sha256_file(tmp)
    provenance = build_provenance(trainer, model_sha, chosen)
    write_json(run.out_provenance, provenance)
    write_text(run.out_card, model_card(provenance, section, Path(run.out_provenance).name))


def build_provenance(trainer: BaseTrainer, model_sha: str, chosen: dict | None = None) -> dict:
    run, section = trainer.run, trainer.section
    manifest = read_manifest(run.data)
    data = {
        name: {"file": Path(path).name, "sha256": sha256_file(path)} for name, path in vars(run.data).items()
    }
    last = trainer.position.history[-1] if trainer.position.history else {}
    return {
        "format": PROVENANCE_FORMAT,
        "model": {"file": Path(run.out_model).name, "sha256": model_sha, "context": section.context},
        "start": {
            "kind": trainer.start.kind,
            "file": Path(trainer.start.path).name if trainer.start.path else None,
            "sha256": sha256_file(trainer.start.path) if trainer.start.path else None,
            "notes": list(trainer.start.notes),
        },
        "data": data,
        "split": {key: manifest.get(key) for key in ("split", "counts", "genome", "annotation")},
        "data_context": manifest["context"],
        "seed": run.seed,
        "world_size": trainer.ctx.world_size,
        "strategy": trainer.engine.describe(),
        "optimizer_steps": trainer.position.step,
        "epochs_done": trainer.position.epoch,
        "train_base": {
            key: value
            for key, value in section.to_dict().items()
            if key not in ("init_weights", "seeds", "enabled")
        },
        "validation": trainer.position.history,
        "last_validation": last,
        "export": {
            "rule": section.export,
            "epoch": chosen["epoch"] if chosen else trainer.position.epoch,
            "validation": chosen if chosen else last,
        },
    }


def threshold_advice(validation: dict) -> list[str]:
    """The card's line on the calling threshold the validation blocks pick (none without sites)."""
    if "picked_threshold" not in validation:
        return []
    return [
        f"- calling threshold: the validation blocks' site F1 is best at {validation['picked_threshold']:g} "
        f"({validation['picked_site_f1']:.3f}; at 0.5 {validation['site_f1']:.3f}): call with "
        f"`calling.threshold: {validation['picked_threshold']:g}`"
    ]


def model_card(provenance: dict, section: TrainBaseSection, provenance_file: str) -> str:
    start = provenance["start"]
    began = (
        "random weights (scratch)"
        if start["kind"] == "scratch"
        else f"{start['file']} ({start['kind']}, sha256 {start['sha256'][:16]}…)"
    )
    last = provenance["last_validation"]
    scores = (
        ", ".join(
            f"{key} {value:.4f}" for key, value in last.items() if isinstance(value, float) and key != "epoch"
        )
        or "no validation blocks"
    )
    lines = [
        f"# {provenance['model']['file']}",
        "",
        "A SpliceAI-family splice-site model (OpenSpliceAI's state-dict format: its `SpliceAI` class "
        f"with flank {section.context} loads it; errorseq's `calling.base_model.weights` may name this folder).",
        "",
        f"- trained by errorseq `train_base`, seed {provenance['seed']}, {provenance['optimizer_steps']} optimizer "
        f"steps in {provenance['epochs_done']} epochs, {provenance['strategy']}, world size {provenance['world_size']}",
        f"- started from {began}",
        *[f"- note: {note}" for note in start["notes"]],
        f"- data: blocks.parquet sha256 {provenance['data']['blocks']['sha256'][:16]}…, "
        f"sequence.npy {provenance['data']['sequence']['sha256'][:16]}…, split {json.dumps(provenance['split'].get('split'))}",
        f"- trainable units per epoch {section.trainable_units}, L2-SP {section.l2sp}, loss {section.loss}, "
        f"lr {section.lr}, token budget {section.token_budget}",
        f"- last validation (held-out validation blocks of the training species): {scores}",
        *threshold_advice(last),
        f"- exported: the weights after epoch {provenance['export']['epoch']} (train_base.export {section.export})",
        "",
        "Intended use: splice-site scores on a genome of the training species or a relative; check "
        "it on held-out genes (evaluate_base) before trusting it elsewhere. Provenance in full: "
        f"{provenance_file}.",
        "",
    ]
    return "\n".join(lines)
