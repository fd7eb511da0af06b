"""Write a DeepSpeed JSON from the `train:` config and the hardware in sight.

    python -m workflow_scripts.training.strategies.deepspeed_config --zero-stage 2 --offload-optimizer --bf16
    python -m workflow_scripts.training.strategies.deepspeed_config --config '{"train": {"zero_stage": "auto"}}' \
        --params 20000000 --world-size 8 --out ds_config.json

`zero_stage: auto` picks the lowest ZeRO stage (1–3) whose per-rank model state fits in 60 % of
the smallest GPU (then adds optimizer and parameter offload if even ZeRO-3 does not fit). A user
JSON (`train.deepspeed_config`) is merged over the generated one, key by key.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import re
import sys
from dataclasses import dataclass

import torch

from workflow_scripts.config.sections import add_config_argument, parse_rule_config
from workflow_scripts.config.train import TrainConfig
from workflow_scripts.errors import InputError, run_cli
from workflow_scripts.io_utils import write_json
from workflow_scripts.training.precision import resolve_precision
from workflow_scripts.training.strategies.deepspeed_user import check_against, load_user_config

GPU_FRACTION_FOR_STATE = 0.6  # the rest is left for activations and buffers


@dataclass(frozen=True)
class Hardware:
    gpu_count: int
    gpu_memory_bytes: int  # the smallest visible GPU; 0 without one
    bf16: bool  # CPUs compute bf16; GPUs say whether they do


CPU_ONLY = Hardware(0, 0, bf16=True)  # ranks on CPU processes (resources.gpu 0)


def detect_hardware() -> Hardware:
    if not torch.cuda.is_available():
        return CPU_ONLY
    count = torch.cuda.device_count()
    memory = min(torch.cuda.get_device_properties(i).total_memory for i in range(count))
    return Hardware(count, memory, bf16=torch.cuda.is_bf16_supported())


def model_state_bytes(params: int, stage: int, world_size: int, mixed: bool) -> float:
    """Per-rank bytes of weights, gradients and Adam state (plus fp32 master in mixed precision)."""
    weight = grad = 2 if mixed else 4
    optim = 12 if mixed else 8
    shards = {
        0: (1, 1, 1),
        1: (1, 1, world_size),
        2: (1, world_size, world_size),
        3: (world_size, world_size, world_size),
    }[stage]
    return params * (weight / shards[0] + grad / shards[1] + optim / shards[2])


def choose_zero(params: int | None, hardware: Hardware, world_size: int, mixed: bool):
    """(stage, offload_optimizer, offload_params) for `zero_stage: auto`."""
    if hardware.gpu_count == 0 or not params:
        return 2, False, False
    budget = hardware.gpu_memory_bytes * GPU_FRACTION_FOR_STATE
    for stage in (1, 2, 3):
        if model_state_bytes(params, stage, world_size, mixed) <= budget:
            return stage, False, False
    weights_only = params * (2 if mixed else 4) * 2 / world_size  # weights + gradients
    return 3, True, weights_only > budget


def zero_section(
    stage: int, offload_optimizer: bool, offload_params: bool, cfg: TrainConfig, hardware: Hardware
) -> dict:
    on_gpu = hardware.gpu_count > 0
    section: dict[str, object] = {
        "stage": stage,
        "overlap_comm": bool(cfg.overlap_comm and on_gpu),
        "contiguous_gradients": True,
        "reduce_scatter": True,
        "reduce_bucket_size": cfg.deepspeed_bucket_elements,
    }
    if stage in (1, 2):
        section["allgather_bucket_size"] = cfg.deepspeed_bucket_elements
    if stage == 3:
        section.update(
            stage3_prefetch_bucket_size=cfg.deepspeed_bucket_elements,
            stage3_param_persistence_threshold=10_000,
            stage3_gather_16bit_weights_on_model_save=True,
        )
    if offload_optimizer and stage > 0:
        section["offload_optimizer"] = {"device": "cpu", "pin_memory": on_gpu}
    if offload_params and stage == 3:
        section["offload_param"] = {"device": "cpu", "pin_memory": on_gpu}
    return section


def generate(
    cfg: TrainConfig, *, world_size: int, micro_batch: int, hardware: Hardware, params: int | None = None
) -> dict:
    """The DeepSpeed config for this run, before any user override."""
    precision = resolve_precision("deepspeed", cfg.precision, cuda=hardware.gpu_count > 0, bf16=hardware.bf16)
    if cfg.zero_stage == "auto":
        stage, off_opt, off_par = choose_zero(params, hardware, world_size, precision != "fp32")
        off_opt, off_par = off_opt or cfg.offload_optimizer, off_par or (cfg.offload_params and stage == 3)
    else:
        stage, off_opt, off_par = cfg.zero_stage, cfg.offload_optimizer, cfg.offload_params
    return {
        "train_batch_size": micro_batch * cfg.grad_accumulation * world_size,
        "train_micro_batch_size_per_gpu": micro_batch,
        "gradient_accumulation_steps": cfg.grad_accumulation,
        "gradient_clipping": cfg.grad_clip,  # explicit: DeepSpeed clips at 1.0 by default
        "steps_per_print": 10**9,
        "wall_clock_breakdown": False,
        "zero_allow_untested_optimizer": True,
        "zero_force_ds_cpu_optimizer": False,  # keep torch AdamW: no JIT-compiled CPU Adam
        "bf16": {"enabled": precision == "bf16"},
        "fp16": {"enabled": precision == "fp16", "loss_scale": 0, "initial_scale_power": 16},
        "zero_optimization": zero_section(stage, off_opt, off_par, cfg, hardware),
    }


def merge(base: dict, override: dict) -> dict:
    merged = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def build(
    cfg: TrainConfig,
    *,
    world_size: int,
    micro_batch: int,
    hardware: Hardware | None = None,
    params: int | None = None,
) -> dict:
    """Generated config, with the user's JSON merged over it and checked."""
    config = generate(
        cfg,
        world_size=world_size,
        micro_batch=micro_batch,
        hardware=hardware or detect_hardware(),
        params=params,
    )
    if cfg.deepspeed_config:
        user = load_user_config(cfg.deepspeed_config)
        check_against(user, config, cfg.deepspeed_config, cfg)
        config = merge(config, user)
    return config


def check_with_deepspeed(config: dict, source: str = "DeepSpeed JSON") -> None:
    """Parse with DeepSpeed's own config class (batch size re-derived for one process); what it
    refuses is one line naming `source` (the user's file)."""
    os.environ.setdefault("DS_ACCELERATOR", "cuda" if torch.cuda.is_available() else "cpu")
    from deepspeed.runtime.config import DeepSpeedConfig

    single = dict(config)
    single["train_batch_size"] = (
        config["train_micro_batch_size_per_gpu"] * config["gradient_accumulation_steps"]
    )
    try:
        DeepSpeedConfig(single)
    except Exception as error:  # pydantic's ValidationError, DeepSpeed's own assertions
        lines = [re.sub(r"\s*\[type=.*", "", line).strip() for line in str(error).strip().splitlines()]
        raise InputError(
            source, "DeepSpeed", "refused by DeepSpeed: " + "; ".join(filter(None, lines[:3]))
        ) from None


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add_config_argument(parser, "train")
    parser.add_argument("--zero-stage", choices=["auto", "0", "1", "2", "3"])
    parser.add_argument("--offload-optimizer", action="store_true")
    parser.add_argument("--offload-params", action="store_true")
    parser.add_argument("--bf16", action="store_true")
    parser.add_argument("--fp16", action="store_true")
    parser.add_argument("--world-size", type=int, default=None, help="default: visible GPUs (1 on CPU)")
    parser.add_argument("--micro-batch", type=int, default=32)
    parser.add_argument("--params", type=int, default=None, help="model parameters, for zero_stage auto")
    parser.add_argument("--out", help="write here instead of stdout")
    return parser.parse_args(argv)


def config_from_args(args: argparse.Namespace) -> TrainConfig:
    """The train: section of --config, strategy deepspeed, with the flags given over it."""
    values = {**parse_rule_config(args.config, required=("train",))["train"], "strategy": "deepspeed"}
    flags = {
        "zero_stage": args.zero_stage,
        "offload_optimizer": args.offload_optimizer or None,
        "offload_params": args.offload_params or None,
        "precision": "bf16" if args.bf16 else "fp16" if args.fp16 else None,
    }
    values.update({key: value for key, value in flags.items() if value is not None})
    return TrainConfig.from_section(values)


def main(argv: list[str] | None = None) -> None:
    os.environ.setdefault("DS_ACCELERATOR", "cuda" if torch.cuda.is_available() else "cpu")
    args = parse_args(argv)
    cfg = config_from_args(args)
    hardware = detect_hardware()
    world = args.world_size or max(hardware.gpu_count, 1)
    config = build(cfg, world_size=world, micro_batch=args.micro_batch, hardware=hardware, params=args.params)
    check_with_deepspeed(config)
    if args.out:
        write_json(args.out, config)
    else:
        json.dump(config, sys.stdout, indent=2)
        print()


if __name__ == "__main__":
    run_cli(main)
