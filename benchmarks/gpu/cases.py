"""The GPU check's cases: every training strategy and precision, as data. benchmarks/gpu/check.py
runs them; nothing here runs anything.

A case names its model section, its train overrides (over BASE_TRAIN), its inputs (`data`), how
it is launched and on how many GPUs, whether its model is then evaluated, and its time limit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

DEMO_CNN = {"arch": "cnn", "d_model": 32, "n_layers": 3, "kernel_size": 9, "dropout": 0.1}  # config.yaml
SMALL_TRANSFORMER = {"arch": "transformer", "d_model": 256, "n_layers": 4, "n_heads": 4, "dropout": 0.1}
MEDIUM_TRANSFORMER = {"arch": "transformer", "d_model": 512, "n_layers": 8, "n_heads": 8, "dropout": 0.1}
BERT_CONFIG = {  # the HF cases' BertConfig (vocabulary: the learnt BPE tokenizer's 256)
    "hidden_size": 256,
    "num_hidden_layers": 4,
    "num_attention_heads": 4,
    "intermediate_size": 1024,
    "max_position_embeddings": 512,
}
BERT = {"backbone": "hf", "path": "BERT_DIR", "init": "random", "dropout": 0.1}  # path: the inputs' BERT
BERT_CHECKPOINTED = {**BERT, "gradient_checkpointing": True}
DEEPSPEED: dict[str, Any] = {"strategy": "deepspeed"}
# Every case's train section, `--steps` optimizer steps unless the case caps or lifts them.
BASE_TRAIN = {"epochs": 1, "log_every_steps": 10, "lr": 0.003}
GROUPS = ("cnn", "hf", "transformer")  # one table each; `cpuadam` and `shapes` are extra groups
DATA = {  # the bucketed inputs a case trains on: token budget per batch, tokenizer
    "nt": {"max_tokens_per_batch": 12800, "max_length": 1024},
    "nt64k": {"max_tokens_per_batch": 65536, "max_length": 1024},
    "bpe": {"max_tokens_per_batch": 12800, "max_length": 512},
}


@dataclass(frozen=True, eq=False)  # a case is itself: results are keyed by it
class Case:
    name: str
    group: str
    model: dict
    train: dict = field(default_factory=dict)
    data: str = "nt"  # a key of DATA
    launcher: str = (
        "gpu"  # gpu: rules.train --gpus 1; torchrun2: 2 ranks on one GPU; cpu2: rules.train --gpus 0
    )
    ngpu: int = 1
    evaluate: bool = False
    timeout_s: int = 240
    max_steps: int | None = None  # at most this many steps (None: --steps)
    whole_epoch: bool = False  # no step limit: one full epoch and its validation


def cnn(name: str, evaluate: bool = False, **train) -> Case:
    return Case(f"cnn {name}", "cnn", DEMO_CNN, train, evaluate=evaluate)


def bert(name: str, model: dict, evaluate: bool = False, **train) -> Case:
    return Case(f"BERT 256x4 {name}", "hf", model, train, data="bpe", evaluate=evaluate)


def medium(name: str, model: dict = MEDIUM_TRANSFORMER, **train) -> Case:
    return Case(f"transformer d512 L8 {name}", "transformer", model, train)


CASES = [
    cnn("ddp fp32", precision="fp32"),
    cnn("ddp bf16", precision="bf16"),
    cnn("ddp fp16 (GradScaler)", precision="fp16"),
    cnn("fsdp fp32", strategy="fsdp", precision="fp32"),
    cnn("fsdp auto (bf16)", strategy="fsdp", precision="auto"),
    cnn("fsdp bf16 offload_params", strategy="fsdp", precision="bf16", offload_params=True),
    cnn("ZeRO-0 fp32", **DEEPSPEED, zero_stage=0, precision="fp32"),
    cnn("ZeRO-1 auto (bf16)", **DEEPSPEED, zero_stage=1, precision="auto"),
    cnn("ZeRO-2 auto (bf16)", **DEEPSPEED, zero_stage=2, precision="auto"),
    cnn("ZeRO-2 fp16", **DEEPSPEED, zero_stage=2, precision="fp16"),
    cnn("ZeRO-3 auto (bf16)", evaluate=True, **DEEPSPEED, zero_stage=3, precision="auto"),
    cnn("ZeRO-2 bf16 offload_optimizer", **DEEPSPEED, zero_stage=2, precision="bf16", offload_optimizer=True),
    cnn(
        "ZeRO-3 bf16 offload both",
        **DEEPSPEED,
        zero_stage=3,
        precision="bf16",
        offload_optimizer=True,
        offload_params=True,
    ),
    cnn("ZeRO auto-stage auto-precision", **DEEPSPEED),
    Case(
        "cnn ddp bf16, 1 full epoch + validation",
        "cnn",
        DEMO_CNN,
        {"precision": "bf16"},
        evaluate=True,
        timeout_s=400,
        whole_epoch=True,
    ),
    Case(
        "cnn ddp fp32, 1 full epoch + validation",
        "cnn",
        DEMO_CNN,
        {"precision": "fp32"},
        evaluate=True,
        timeout_s=400,
        whole_epoch=True,
    ),
    Case(
        "cnn ddp, 2 ranks on 1 GPU (plain torchrun)",
        "cnn",
        DEMO_CNN,
        {"precision": "bf16"},
        launcher="torchrun2",
        timeout_s=120,
        max_steps=20,
    ),
    Case(
        "cnn ddp, rules.train --gpus 0 --cpu-procs 2",
        "cnn",
        DEMO_CNN,
        {"precision": "fp32"},
        launcher="cpu2",
        ngpu=0,
        timeout_s=180,
        max_steps=20,
    ),
    bert("ddp fp32", BERT, precision="fp32"),
    bert("ddp bf16", BERT, precision="bf16"),
    bert("ddp bf16 + checkpointing", BERT_CHECKPOINTED, evaluate=True, precision="bf16"),
    bert("fsdp bf16 + checkpointing", BERT_CHECKPOINTED, strategy="fsdp", precision="bf16"),
    bert(
        "ZeRO-3 bf16 + checkpointing",
        BERT_CHECKPOINTED,
        evaluate=True,
        **DEEPSPEED,
        zero_stage=3,
        precision="bf16",
    ),
    medium("ddp fp32", precision="fp32"),
    medium("ddp bf16", precision="bf16"),
    medium("fsdp bf16", strategy="fsdp", precision="bf16"),
    medium("ZeRO-2 bf16", **DEEPSPEED, zero_stage=2, precision="bf16"),
    medium("ZeRO-3 bf16", **DEEPSPEED, zero_stage=3, precision="bf16"),
    medium(
        "ddp bf16 + checkpointing", {**MEDIUM_TRANSFORMER, "gradient_checkpointing": True}, precision="bf16"
    ),
    Case(
        "transformer d512 L8 ddp fp32, 65,536-token batches",
        "transformer",
        MEDIUM_TRANSFORMER,
        {"precision": "fp32"},
        data="nt64k",
        max_steps=60,
    ),
    Case(
        "transformer d512 L8 ddp bf16, 65,536-token batches",
        "transformer",
        MEDIUM_TRANSFORMER,
        {"precision": "bf16"},
        data="nt64k",
        max_steps=60,
    ),
    Case("transformer d256 L4 ddp fp32", "transformer", SMALL_TRANSFORMER, {"precision": "fp32"}),
    Case("transformer d256 L4 ddp bf16", "transformer", SMALL_TRANSFORMER, {"precision": "bf16"}),
]


def train_section(case: Case, steps: int) -> dict:
    """The case's train section for a run of `steps` optimizer steps."""
    if case.whole_epoch:
        limits = {"checkpoint_every_steps": 10**6}
    else:
        limits = {"max_steps": min(steps, case.max_steps or steps), "checkpoint_every_steps": steps}
    return {**BASE_TRAIN, **limits, **case.train}


def selected(groups: list[str], only: str | None) -> list[Case]:
    """The cases of `groups` whose name holds one of the |-separated substrings of `only`."""
    wanted = only.split("|") if only else None
    return [c for c in CASES if c.group in groups and (wanted is None or any(s in c.name for s in wanted))]
