"""A user's DeepSpeed JSON (`train.deepspeed_config`): read, and checked against what errorseq sets.

The JSON is merged over the generated one (deepspeed_config.py), so it may tune anything
errorseq leaves to DeepSpeed (communication buckets, loss scaling, logging). What errorseq
decides itself it may only repeat: the batch (the bucket batch sizes, train.grad_accumulation and
the world size), gradient clipping, precision, the ZeRO stage and offload (train.*), and the
settings its own optimizer needs. A value that differs is one line naming the file and the key,
before torchrun starts (preflight checks what the config alone decides while the workflow is
parsed; the train and pretrain entry points check the rest). Only the standard library and
config/train.py: Snakemake imports it.
"""

from __future__ import annotations

import json
from pathlib import Path

from workflow_scripts.config.train import TrainConfig
from workflow_scripts.errors import InputError

CLIENT_OWNED_KEYS = ("optimizer", "scheduler")  # errorseq passes its own AdamW and schedule
# errorseq's torch AdamW with ZeRO, kept on the GPU or CPU as torch put it (nothing JIT-compiled)
REQUIRED = {"zero_allow_untested_optimizer": True, "zero_force_ds_cpu_optimizer": False}
# key path → where errorseq's value comes from
DECIDED = {
    "train_batch_size": "the bucket batch sizes × train.grad_accumulation × world size",
    "train_micro_batch_size_per_gpu": "the largest bucket batch size (bucket: section)",
    "gradient_accumulation_steps": "train.grad_accumulation",
    "gradient_clipping": "train.grad_clip",
    "bf16.enabled": "train.precision",
    "fp16.enabled": "train.precision",
    "zero_optimization.stage": "train.zero_stage",
    "zero_optimization.offload_optimizer": "train.offload_optimizer",
    "zero_optimization.offload_param": "train.offload_params",
}
AUTO_DECIDED = (
    "zero_optimization.stage",
    "zero_optimization.offload_optimizer",
    "zero_optimization.offload_param",
)


def load_user_config(path: str) -> dict:
    field = "train.deepspeed_config"
    try:
        user = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise InputError("config", field, f"{path} does not exist") from None
    except UnicodeDecodeError:
        raise InputError(path, "JSON", "not a text file") from None
    except json.JSONDecodeError as error:
        raise InputError(path, "JSON", f"line {error.lineno}: {error.msg}") from None
    if not isinstance(user, dict):
        raise InputError(path, "JSON", "must be an object")
    for key in CLIENT_OWNED_KEYS:
        if key in user:
            raise InputError(
                path, key, "errorseq builds the optimizer and LR schedule from train.*; remove it"
            )
    for key, value in REQUIRED.items():
        if key in user and user[key] != value:
            raise InputError(path, key, f"must be {json.dumps(value)}: errorseq passes its own torch AdamW")
    return user


def lookup(config: dict, dotted: str) -> tuple[bool, object]:
    """(present, value) of a dotted key path."""
    node: object = config
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return False, None
        node = node[part]
    return True, node


def offloads(value: object) -> bool:
    """An offload section that moves something off the GPU (absent or device none: no)."""
    return isinstance(value, dict) and value.get("device", "none") != "none"


def check_against(user: dict, decided: dict, source: str, cfg: TrainConfig) -> None:
    """Each key of DECIDED the user sets must equal errorseq's value in `decided` (a generated
    config, or part of one: keys it lacks are not checked)."""
    for key, origin in DECIDED.items():
        if cfg.zero_stage == "auto" and key in AUTO_DECIDED:
            continue  # the user's JSON may pin what auto would choose
        given, value = lookup(user, key)
        known, expected = lookup(decided, key)
        is_offload = key.endswith(("offload_optimizer", "offload_param"))
        if not given or (not known and not is_offload):
            continue
        if is_offload:
            value, expected = offloads(value), offloads(expected)
        if value != expected:
            raise InputError(
                source,
                key,
                f"{json.dumps(value)} differs from {origin} ({json.dumps(expected)}); set it in one place",
            )


def decided_by_config(cfg: TrainConfig) -> dict:
    """The part of the generated JSON the train: section alone decides (the rest needs the run)."""
    decided: dict = {
        "gradient_accumulation_steps": cfg.grad_accumulation,
        "gradient_clipping": cfg.grad_clip,
        "zero_optimization": {"stage": cfg.zero_stage},
    }
    if cfg.zero_stage != "auto":
        offload = {"device": "cpu"}
        if cfg.offload_optimizer and cfg.zero_stage != 0:
            decided["zero_optimization"]["offload_optimizer"] = offload
        if cfg.offload_params and cfg.zero_stage == 3:
            decided["zero_optimization"]["offload_param"] = offload
    if cfg.precision in ("fp32", "bf16", "fp16"):
        decided.update(bf16={"enabled": cfg.precision == "bf16"}, fp16={"enabled": cfg.precision == "fp16"})
    return decided


def check_user_file(train: dict) -> None:
    """Preflight: the completed train: section's DeepSpeed JSON, as far as the config decides."""
    cfg = TrainConfig.from_section(train)
    if cfg.strategy != "deepspeed" or not cfg.deepspeed_config:
        return
    user = load_user_config(cfg.deepspeed_config)
    check_against(user, decided_by_config(cfg), cfg.deepspeed_config, cfg)
