"""The DeepSpeed JSON generator: valid for DeepSpeed's own parser, hardware-aware, overridable."""

import json
import subprocess
import sys

import pytest

from tests.train_fixtures import ROOT, subprocess_env, train_config
from tests.workflow_helpers import HANG_GUARD_S
from workflow_scripts.errors import InputError
from workflow_scripts.training.strategies import deepspeed_config as dsc

CPU = dsc.Hardware(gpu_count=0, gpu_memory_bytes=0, bf16=True)
GPU_80G = dsc.Hardware(gpu_count=8, gpu_memory_bytes=80 * 2**30, bf16=True)


def config(**train):
    return train_config(**{"strategy": "deepspeed", **train})


@pytest.mark.parametrize(
    "train",
    [
        {"zero_stage": 0},
        {"zero_stage": 1, "offload_optimizer": True},
        {"zero_stage": 2, "precision": "bf16", "grad_accumulation": 4, "grad_clip": 0.0},
        {"zero_stage": 3, "offload_optimizer": True, "offload_params": True, "precision": "bf16"},
    ],
)
def test_generated_json_loads_in_deepspeeds_parser(train):
    generated = dsc.build(config(**train), world_size=4, micro_batch=16, hardware=CPU)
    dsc.check_with_deepspeed(generated)
    assert generated["train_batch_size"] == 16 * train.get("grad_accumulation", 1) * 4
    assert generated["gradient_clipping"] == train.get("grad_clip", 1.0)  # never DeepSpeed's 1.0 default
    assert generated["zero_force_ds_cpu_optimizer"] is False  # torch AdamW: nothing JIT-compiled
    zero = generated["zero_optimization"]
    assert zero["stage"] == train["zero_stage"] and zero["overlap_comm"] is False  # CPU: no streams
    assert ("offload_optimizer" in zero) == train.get("offload_optimizer", False)
    assert ("offload_param" in zero) == train.get("offload_params", False)


def test_auto_stage_follows_model_size_and_gpu_memory():
    small, huge = 100_000_000, 60_000_000_000
    gpu_24g = dsc.Hardware(8, 24 * 2**30, True)  # 60 % = 14.4 GiB for model state
    assert dsc.choose_zero(small, GPU_80G, 8, mixed=True) == (1, False, False)
    assert dsc.choose_zero(3_000_000_000, gpu_24g, 8, mixed=True) == (2, False, False)  # 16.5 → 11.3 GB
    assert dsc.choose_zero(5_000_000_000, gpu_24g, 8, mixed=True) == (3, False, False)  # 18.8 → 10 GB
    assert dsc.choose_zero(huge, GPU_80G, 8, mixed=True) == (3, True, False)  # optimizer state to CPU
    assert dsc.choose_zero(200_000_000_000, GPU_80G, 8, mixed=True) == (3, True, True)  # weights too
    assert dsc.choose_zero(small, CPU, 2, mixed=False) == (2, False, False)
    generated = dsc.build(config(), world_size=8, micro_batch=8, hardware=GPU_80G, params=small)
    assert generated["bf16"]["enabled"] and generated["zero_optimization"]["overlap_comm"]


def test_fp16_is_refused_where_the_device_lacks_it():
    with pytest.raises(InputError, match="train.precision: fp16 needs a CUDA GPU"):
        dsc.build(config(precision="fp16", zero_stage=2), world_size=2, micro_batch=4, hardware=CPU)
    fp16 = dsc.build(config(precision="fp16", zero_stage=2), world_size=2, micro_batch=4, hardware=GPU_80G)
    assert fp16["fp16"]["enabled"] and not fp16["bf16"]["enabled"]
    old_gpu = dsc.Hardware(gpu_count=1, gpu_memory_bytes=16 * 2**30, bf16=False)
    with pytest.raises(InputError, match="train.precision: bf16 is not supported on this GPU"):
        dsc.build(config(precision="bf16", zero_stage=2), world_size=1, micro_batch=4, hardware=old_gpu)
    assert not dsc.build(config(zero_stage=2), world_size=1, micro_batch=4, hardware=old_gpu)["bf16"][
        "enabled"
    ]


def test_communication_buckets_follow_deepspeed_bucket_elements():
    for stage, keys in (
        (2, ("reduce_bucket_size", "allgather_bucket_size")),
        (3, ("reduce_bucket_size", "stage3_prefetch_bucket_size")),
    ):
        zero = dsc.build(
            config(zero_stage=stage, deepspeed_bucket_elements=12_345),
            world_size=2,
            micro_batch=4,
            hardware=CPU,
        )["zero_optimization"]
        assert all(zero[key] == 12_345 for key in keys), zero
    assert (
        dsc.build(config(zero_stage=2), world_size=2, micro_batch=4, hardware=CPU)["zero_optimization"][
            "reduce_bucket_size"
        ]
        == 50_000_000
    )  # schema default
    with pytest.raises(InputError, match="train.bucket_size: unknown key"):
        config(bucket_size=10)


def test_user_json_overrides_key_by_key_and_is_checked(tmp_path):
    user = tmp_path / "ds.json"
    user.write_text(json.dumps({"zero_optimization": {"reduce_bucket_size": 123}, "steps_per_print": 5}))
    merged = dsc.build(
        config(zero_stage=2, deepspeed_config=str(user)), world_size=2, micro_batch=4, hardware=CPU
    )
    assert merged["zero_optimization"] == {
        **merged["zero_optimization"],
        "stage": 2,
        "reduce_bucket_size": 123,
    }
    assert merged["steps_per_print"] == 5
    user.write_text(json.dumps({"optimizer": {"type": "AdamW"}}))
    with pytest.raises(InputError, match="optimizer: errorseq builds"):
        dsc.build(config(deepspeed_config=str(user)), world_size=2, micro_batch=4, hardware=CPU)
    user.write_text(json.dumps({"gradient_accumulation_steps": 3}))
    with pytest.raises(InputError, match="differs from train.grad_accumulation"):
        dsc.build(config(deepspeed_config=str(user)), world_size=2, micro_batch=4, hardware=CPU)


def test_bad_offload_settings_name_the_key():
    with pytest.raises(InputError, match="train.offload_params: needs zero_stage 3"):
        config(zero_stage=2, offload_params=True)
    with pytest.raises(InputError, match="train.offload_optimizer: needs zero_stage 1, 2 or 3"):
        config(zero_stage=0, offload_optimizer=True)
    assert config(zero_stage="3").zero_stage == 3  # --config delivers strings
    with pytest.raises(InputError, match="train.epochs"):
        config(epochs=0)  # ranges come from the schema


def test_cli_writes_a_valid_json(tmp_path):
    out = tmp_path / "ds.json"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "workflow_scripts.training.strategies.deepspeed_config",
            "--zero-stage",
            "2",
            "--offload-optimizer",
            "--bf16",
            "--world-size",
            "2",
            "--out",
            str(out),
            "--config",
            json.dumps({"train": {"deepspeed_bucket_elements": 777}}),
        ],
        cwd=ROOT,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    written = json.loads(out.read_text())
    assert written["zero_optimization"]["offload_optimizer"]["device"] == "cpu"
    assert written["bf16"]["enabled"] and written["train_batch_size"] == 64
    assert written["zero_optimization"]["reduce_bucket_size"] == 777


def test_tensorboard_without_the_package_is_a_clear_error(monkeypatch):
    import importlib.util

    from workflow_scripts.training.telemetry import require_tensorboard

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(InputError, match="train.tensorboard: needs the tensorboard package"):
        require_tensorboard()


def test_tensorboard_gets_the_step_log_records(tmp_path):
    """The real SummaryWriter; the event file is read back with TensorBoard's own reader."""
    import json as json_module

    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    from workflow_scripts.training.telemetry import MetricsSink

    sink = MetricsSink(tmp_path / "steps.jsonl", enabled=True, tensorboard_dir=str(tmp_path / "tb"))
    sink.open(keep_until_step=None)
    sink.write(
        {
            "kind": "train",
            "epoch": 1,
            "step": 5,
            "loss": 0.5,
            "lr": 0.001,
            "tokens_per_s": 10.0,
            "windows_per_s": 1.0,
            "step_s": 0.1,
            "rss_mb": 100.0,
            "gpu_allocated_mb": None,
            "gpu_reserved_mb": None,
            "gpu_peak_mb": None,
        }
    )
    sink.write(
        {"kind": "val", "epoch": 1, "step": 5, "val_loss": 0.25, "val_accuracy": 0.5, "val_roc_auc": None}
    )
    sink.close()
    events = EventAccumulator(str(tmp_path / "tb"))
    events.Reload()
    assert sorted(events.Tags()["scalars"]) == [  # numbers only: null GPU memory and ROC-AUC left out
        "train/loss",
        "train/lr",
        "train/rss_mb",
        "train/step_s",
        "train/tokens_per_s",
        "train/windows_per_s",
        "val/val_accuracy",
        "val/val_loss",
    ]
    loss = events.Scalars("train/loss")
    assert [(e.step, e.value) for e in loss] == [(5, 0.5)]
    assert json_module.loads((tmp_path / "steps.jsonl").read_text().splitlines()[0])["loss"] == 0.5
