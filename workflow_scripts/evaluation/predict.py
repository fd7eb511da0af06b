"""A trained model's P(error) for the windows of one split (the evaluate rule's model side)."""

from __future__ import annotations

import json
import pickle
import zipfile
from pathlib import Path

import numpy as np
import torch

from workflow_scripts.artifacts import WEIGHTS_DIGEST_FIELD
from workflow_scripts.calling.tensor_checks import check_fits, checked_storage, meta_shapes
from workflow_scripts.errors import InputError
from workflow_scripts.file_headers import zip_entries
from workflow_scripts.io_utils import sha256_file
from workflow_scripts.models.builtin import build_model
from workflow_scripts.models.call_inputs import feature_width, saved_input_columns
from workflow_scripts.models.score_channels import saved_score_channels
from workflow_scripts.tokenization.tokenizers import load_tokenizer
from workflow_scripts.training.batches import (
    BatchCollator,
    SplitData,
    inputs_on,
    load_split,
    sorted_batches,
)
from workflow_scripts.training.distributed import avoid_per_shape_kernels


def load_trained_model(model_path: str, config_path: str) -> tuple[torch.nn.Module, dict]:
    """Rebuild the model from model.json and load its weights (weights_only: no pickle)."""
    for path in (model_path, config_path):
        if not Path(path).exists():
            raise InputError(path, "model", "file does not exist (has train finished?)")
    saved = json.loads(Path(config_path).read_text())
    check_weights_digest(model_path, saved, config_path)
    return model_with_weights(saved, load_state_dict(model_path), model_path, config_path), saved


def model_with_weights(saved: dict, state: dict, model_path: str, config_path: str) -> torch.nn.Module:
    """The model model.json (`saved`) describes, holding the tensors of `state` (read from
    `model_path`); a state of another shape (say another input_columns) is one line naming both."""
    tokenizer = load_tokenizer(saved["tokenizer"])

    def build() -> torch.nn.Module:
        # pretrained=False: a Hugging Face backbone is rebuilt from its config, weights come from model.pt
        return build_model(
            saved["model"],
            tokenizer.vocab_size,
            saved["max_tokens"],
            pretrained=False,
            n_features=feature_width(saved_input_columns(saved)),
            n_score_channels=len(saved_score_channels(saved)),
        )

    expected = meta_shapes(build)  # the tensors' names, shapes and dtypes, before anything is allocated
    if expected is not None:
        checked_storage(state, model_path)
        check_fits(state, expected, model_path, f"{config_path} describes")
    model = build()
    try:
        model.load_state_dict(state)
    except RuntimeError as error:
        found = [line.strip() for line in str(error).splitlines()[1:] if line.strip()]
        raise InputError(
            model_path,
            "model",
            f"does not fit the model {config_path} describes ({found[0] if found else 'other tensors'})",
        ) from None
    return model.eval()


def check_weights_digest(model_path: str, saved: dict, config_path: str) -> None:
    """The sha256 train recorded in model.json (artifacts.WEIGHTS_DIGEST_FIELD) must match:
    a model.pt changed since (corrupted, swapped) is refused even where it still loads."""
    expected = saved.get(WEIGHTS_DIGEST_FIELD)
    if expected and sha256_file(model_path) != expected:
        raise InputError(
            model_path,
            "sha256",
            f"differs from the {WEIGHTS_DIGEST_FIELD} train recorded in {config_path}: the file "
            "changed after training (rerun train)",
        )


def load_state_dict(path: str) -> dict:
    """Tensors only: a file that needs arbitrary unpickling is refused, never executed; a zip
    archive's entry sizes checked against the file before torch reads it (file_headers.py)."""
    if Path(path).is_file() and zipfile.is_zipfile(path):
        zip_entries(Path(path), path)
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as error:
        found = [line.strip() for line in str(error).splitlines() if "unsupported global" in line.lower()]
        raise InputError(
            path,
            "model",
            "refused: it holds Python objects, not just tensors "
            f"(loaded with weights_only; {found[0] if found else 'not a plain state dict'})",
        ) from None
    except (RuntimeError, EOFError, OSError) as error:
        reason = str(error).strip().split(". ")[0]
        raise InputError(path, "model", f"not a readable PyTorch file ({reason})") from None


@torch.no_grad()
def predict(
    model: torch.nn.Module, data: SplitData, collator: BatchCollator, batch_size: int, device: torch.device
) -> np.ndarray:
    """P(error) for every row of `data`, in its order."""
    probs = np.zeros(len(data), dtype=np.float64)
    model.to(device)
    for indices in sorted_batches(data, batch_size):
        batch = collator(indices)
        logits = model(*inputs_on(batch, device)).float()
        probs[indices] = torch.softmax(logits, -1)[:, 1].cpu().numpy()
    return probs


def evaluation_device() -> torch.device:
    if not torch.cuda.is_available():
        return torch.device("cpu")
    avoid_per_shape_kernels()
    return torch.device("cuda")


def predict_split(
    model: torch.nn.Module, saved: dict, windows: str, manifest: str, split: str, batch_size: int
) -> tuple[SplitData, np.ndarray]:
    """The split's windows (manifest order) and the model's P(error) for each."""
    data = load_split(windows, manifest, split, saved_input_columns(saved), saved_score_channels(saved))
    if len(data) == 0:
        return data, np.zeros(0)
    collator = BatchCollator(data, load_tokenizer(saved["tokenizer"]), saved["max_tokens"])
    return data, predict(model, data, collator, batch_size, evaluation_device())
