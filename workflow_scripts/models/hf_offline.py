"""transformers, imported and used offline: models and tokenizers come from a local directory or
the Hugging Face cache (`local_files_only=True`, HF_HUB_OFFLINE=1); errorseq never downloads.
What was loaded is checked: the encoder's weights all there, tensors outside the state dict rebuilt."""

from __future__ import annotations

import os
from pathlib import Path

import torch
from torch import nn

from workflow_scripts.errors import InputError


def require_transformers():
    """Import transformers offline, or explain how to install the optional extra."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        import transformers
    except ImportError:
        raise InputError(
            "config",
            "model.backbone",
            "hf needs the optional extra: pip install -r requirements-hf.txt (transformers, tokenizers)",
        ) from None
    transformers.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    return transformers


def load_offline(loader, path: str, what: str, **kwargs):
    """`loader.from_pretrained(path)` from local files only; a missing model is one clear error."""
    if Path(path).is_absolute() or path.startswith(".") or path.count("/") > 1:
        if not Path(path).is_dir():
            raise InputError(path, what, "no such directory (a local model or tokenizer directory)")
    try:
        return loader.from_pretrained(path, local_files_only=True, **kwargs)
    except (OSError, ValueError) as error:
        hint = (
            ""
            if Path(path).is_dir()
            else (
                " (not a local directory, and not in the Hugging Face cache; download it once with "
                "`hf download NAME` or save_pretrained, then point model.path at it; errorseq never "
                "downloads at run time)"
            )
        )
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise InputError(path, what, f"cannot load offline{hint}: {first_line}") from None


def check_encoder_loaded(hf_model: nn.Module, missing_keys, path: str) -> None:
    """Only the new head (and a pooler the checkpoint lacks) may start untrained."""
    prefix = f"{hf_model.base_model_prefix}."
    missing = [key for key in missing_keys if key.startswith(prefix) and ".pooler." not in key]
    if missing:
        raise InputError(
            path,
            "model.path",
            f"{len(missing)} encoder tensors are not in the checkpoint "
            f"(e.g. {missing[0]}): it does not hold weights for this architecture",
        )


def materialise_plain_tensors(hf_model: nn.Module, path: str) -> None:
    """transformers builds models on the meta device and then loads the state dict, so a tensor
    that remote code keeps as a plain attribute (DNABERT-2's ALiBi bias) stays empty. Rebuild
    ALiBi biases on the CPU; any other such tensor is one clear error."""
    for name, module in hf_model.named_modules():
        for attribute, value in list(vars(module).items()):
            if not (isinstance(value, torch.Tensor) and value.is_meta):
                continue
            if attribute == "alibi" and hasattr(module, "rebuild_alibi_tensor"):
                module.rebuild_alibi_tensor(size=value.shape[-1], device="cpu")
            else:
                raise InputError(
                    path,
                    "model.path",
                    f"the model's code keeps tensor "
                    f"{name}.{attribute} outside its state dict and it was not loaded",
                )
