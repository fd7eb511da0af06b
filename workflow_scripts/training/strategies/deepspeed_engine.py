"""DeepSpeed ZeRO 0–3 with optional CPU offload, from a generated (or user) JSON config."""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

import torch

from workflow_scripts.training.strategies import deepspeed_config
from workflow_scripts.training.strategies.base import Engine, optimizer_state_tensors, tensor_bytes

ENGINE_TAG = "engine"


def skip_shm_op_build() -> None:
    """DeepSpeed JIT-compiles a shared-memory all-reduce for CPU inference on every initialize
    (35–45 s, needs a compiler); torchrun training never uses it."""
    module = sys.modules.get("deepspeed.comm.torch")
    if module is not None:
        setattr(module, "build_shm_op", lambda: None)  # noqa: B010 (a module attribute mypy cannot see)


def import_deepspeed():
    if not torch.cuda.is_available():
        os.environ.setdefault("DS_ACCELERATOR", "cpu")
    warnings.filterwarnings("ignore", message=".*all_gather_into_tensor.* is deprecated")
    import deepspeed
    import deepspeed.comm.torch  # noqa: F401  (registers the module patched below)

    skip_shm_op_build()
    return deepspeed


class DeepSpeedEngine(Engine):
    name = "deepspeed"

    def __init__(self, model, ctx, cfg, total_steps, micro_batch: int = 1):
        deepspeed = import_deepspeed()
        self.config = deepspeed_config.build(
            cfg,
            world_size=ctx.world_size,
            micro_batch=micro_batch,
            params=sum(p.numel() for p in model.parameters()),
        )
        super().__init__(model.to(ctx.device), ctx, cfg, total_steps)
        self.engine, self.ds_optimizer, _, _ = deepspeed.initialize(
            model=model, optimizer=self.optimizer, config=self.config, dist_init_required=False
        )
        self.model = self.engine
        self.stage = self.engine.zero_optimization_stage()

    def describe(self) -> str:
        zero = self.config["zero_optimization"]
        offload = [k for k in ("offload_optimizer", "offload_param") if k in zero]
        precision = (
            "bf16" if self.config["bf16"]["enabled"] else "fp16" if self.config["fp16"]["enabled"] else "fp32"
        )
        return f"deepspeed ZeRO-{self.stage} {precision}" + (f" ({', '.join(offload)})" if offload else "")

    def eval_model(self):
        return self.engine  # ZeRO-3 forward hooks gather the parameters

    def backward(self, loss, sync):
        self.engine.set_gradient_accumulation_boundary(sync)
        self.engine.backward(loss, scale_wrt_gas=False)  # the loop already divides by the group size

    def clip_and_step(self):
        self.engine.step()  # clips (gradient_clipping) and zeroes the gradients itself
        self.scheduler.step()

    def full_state_dict(self) -> dict:
        from deepspeed.utils import safe_get_full_fp32_param

        state = {}
        for name, param in self.engine.module.named_parameters():
            full = safe_get_full_fp32_param(param)  # collective under ZeRO-3
            state[name] = (full if full is not None else param.detach()).float().cpu().clone()
        for name, buffer in self.engine.module.named_buffers():
            state[name] = buffer.detach().cpu().clone()
        # The module's own keys and order: non-persistent buffers (HF BERT's position_ids) stay out
        return {key: state[key] for key in self.module.state_dict()}

    def save(self, directory: Path) -> None:
        self.engine.save_checkpoint(str(directory), tag=ENGINE_TAG, save_latest=False)

    def load(self, directory: Path) -> None:
        path, _ = self.engine.load_checkpoint(
            str(directory), tag=ENGINE_TAG, load_optimizer_states=True, load_lr_scheduler_states=False
        )
        if path is None:
            raise RuntimeError(f"DeepSpeed could not load the checkpoint in {directory}")

    def shard_bytes(self) -> dict:
        # ZeRO-3: this rank's partition (ds_tensor) plus any whole copy still resident (p.data is
        # empty when partitioned; parameters under stage3_param_persistence_threshold stay whole)
        modules = list(self.engine.module.parameters())
        params = [p.data for p in modules] + [p.ds_tensor for p in modules if hasattr(p, "ds_tensor")]
        inner = getattr(self.ds_optimizer, "optimizer", self.ds_optimizer)
        return {
            "param_bytes": tensor_bytes(params),
            "optimizer_bytes": tensor_bytes(optimizer_state_tensors(inner)),
        }
