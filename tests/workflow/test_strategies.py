"""Real 2-rank torchrun launches: DDP, FSDP2 and DeepSpeed ZeRO-0/1/2/3 (with accumulation,
clipping, offload, bf16, gradient checkpointing) against one process on the same global batch;
then DDP, FSDP2 and ZeRO-3 with a Hugging Face BERT (gradient checkpointing on)."""

import json
import math
import subprocess
import sys

import pytest
import torch

from tests.strategy_harness import reference_run
from tests.train_fixtures import ROOT, subprocess_env

MODEL = {
    "arch": "transformer",
    "d_model": 32,
    "n_layers": 2,
    "n_heads": 2,
    "ffn_multiplier": 2,
    "dropout": 0.0,
    "gradient_checkpointing": True,
}
BASE = {"grad_clip": 0.5, "lr": 0.01}
FP32_CASES = {
    "ddp": {"strategy": "ddp"},
    "fsdp": {"strategy": "fsdp"},
    "zero0": {"strategy": "deepspeed", "zero_stage": 0},
    "zero1": {"strategy": "deepspeed", "zero_stage": 1},
    "zero2": {"strategy": "deepspeed", "zero_stage": 2},
    "zero3": {"strategy": "deepspeed", "zero_stage": 3},  # + user JSON: shard every parameter
    "fsdp_acc2": {"strategy": "fsdp", "grad_accumulation": 2},
    "zero2_acc2_offload": {
        "strategy": "deepspeed",
        "zero_stage": 2,
        "grad_accumulation": 2,
        "offload_optimizer": True,
    },
}
BF16_CASES = {
    "fsdp_bf16": {"strategy": "fsdp", "precision": "bf16"},
    "zero3_bf16_offload": {
        "strategy": "deepspeed",
        "zero_stage": 3,
        "precision": "bf16",
        "offload_optimizer": True,
        "offload_params": True,
    },
}


def launch_harness(out, model: dict, cases: dict) -> tuple[dict, dict, dict]:
    """Every case in one torchrun launch of tests/strategy_harness.py; zero3 shards every tensor."""
    user_json = out / "user_ds.json"
    user_json.write_text(json.dumps({"zero_optimization": {"stage3_param_persistence_threshold": 0}}))
    cases = {name: {**BASE, **case} for name, case in cases.items()}
    cases["zero3"]["deepspeed_config"] = str(user_json)
    spec = {"model": model, "steps": 4, "global_batch": 8, "seq_len": 24, "cases": cases}
    (out / "spec.json").write_text(json.dumps(spec))
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--standalone",
            "--nproc_per_node=2",
            "--max_restarts=0",
            "-m",
            "tests.strategy_harness",
            str(out / "spec.json"),
            str(out),
        ],
        cwd=ROOT,
        env={**subprocess_env(), "OMP_NUM_THREADS": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    results = json.loads((out / "results.json").read_text())
    states = {name: torch.load(out / f"{name}.pt", weights_only=True) for name in results}
    return spec, results, states


@pytest.fixture(scope="module")
def harness(tmp_path_factory):
    return launch_harness(tmp_path_factory.mktemp("strategies"), MODEL, {**FP32_CASES, **BF16_CASES})


@pytest.fixture(scope="module")
def hf_harness(tmp_path_factory):
    """A tiny BERT (random init, no dropout) under DDP, FSDP2 (one unit per BertLayer) and ZeRO-3."""
    transformers = pytest.importorskip("transformers")
    out = tmp_path_factory.mktemp("hf_strategies")
    config = transformers.BertConfig(
        vocab_size=16,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=32,
        attention_probs_dropout_prob=0.0,
    )
    config.save_pretrained(str(out / "bert"))
    model = {
        "backbone": "hf",
        "path": str(out / "bert"),
        "init": "random",
        "dropout": 0.0,
        "gradient_checkpointing": True,
    }
    return launch_harness(out, model, {name: FP32_CASES[name] for name in ("ddp", "fsdp", "zero3")})


@pytest.fixture(scope="module")
def references(harness):
    spec = harness[0]
    return {acc: reference_run(spec, {**BASE, "grad_accumulation": acc}) for acc in (1, 2)}


def comparable(state: dict) -> dict:
    """All weights but the attention key bias: softmax cancels it, so its gradient is rounding
    noise that Adam turns into ±lr steps in any run (one process included)."""
    out = dict(state)
    for key in [k for k in state if k.endswith("in_proj_bias")]:
        d = state[key].shape[0] // 3
        out[key] = torch.cat([state[key][:d], state[key][2 * d :]])
    for key in [k for k in state if k.endswith("attention.self.key.bias")]:  # BERT's key bias
        del out[key]
    return out


@pytest.mark.parametrize("name", FP32_CASES)
def test_fp32_two_ranks_match_one_process_on_the_same_global_batch(harness, references, name):
    _, results, states = harness
    ref_state, ref_losses = references[FP32_CASES[name].get("grad_accumulation", 1)]
    assert results[name]["losses"] == pytest.approx(ref_losses, abs=1e-5)
    got, want = comparable(states[name]), comparable(ref_state)
    assert got.keys() == want.keys()
    for key in want:
        torch.testing.assert_close(got[key], want[key], rtol=0, atol=1e-5, msg=f"{name}: {key}")


@pytest.mark.parametrize("name", BF16_CASES)
def test_bf16_and_offload_stay_close_to_fp32(harness, references, name):
    _, results, states = harness
    ref_state, ref_losses = references[1]
    assert results[name]["losses"] == pytest.approx(ref_losses, abs=1e-2)
    assert all(states[name][k].dtype == torch.float32 for k in ref_state)  # exported as fp32


def test_sharding_shrinks_per_rank_bytes_as_promised(harness):
    _, results, states = harness
    full_params = sum(v.numel() * 4 for v in states["ddp"].values())
    adam_states = 2 * full_params
    rank_bytes = {name: r["bytes"] for name, r in results.items()}
    for name in ("ddp", "zero0"):  # replicated
        assert all(
            b == {"param_bytes": full_params, "optimizer_bytes": adam_states} for b in rank_bytes[name]
        )
    for name in ("zero1", "zero2", "zero2_acc2_offload"):  # optimizer state sharded
        for b in rank_bytes[name]:
            assert b["param_bytes"] == full_params
            assert b["optimizer_bytes"] == pytest.approx(adam_states / 2, rel=0.01)
    for name in ("fsdp", "zero3"):  # parameters too
        for b in rank_bytes[name]:
            assert b["param_bytes"] == pytest.approx(full_params / 2, rel=0.01)
            assert b["optimizer_bytes"] == pytest.approx(adam_states / 2, rel=0.01)
    assert results["zero3_bf16_offload"]["strategy"].endswith("bf16 (offload_optimizer, offload_param)")


@pytest.mark.parametrize("name", ["ddp", "fsdp", "zero3"])
def test_hf_model_under_each_strategy_matches_one_process(hf_harness, name):
    spec, results, states = hf_harness
    ref_state, ref_losses = reference_run(spec, BASE)
    assert results[name]["losses"] == pytest.approx(ref_losses, abs=1e-5)
    got, want = comparable(states[name]), comparable(ref_state)
    assert got.keys() == want.keys() and any("encoder.layer.1" in key for key in want)
    for key in want:
        torch.testing.assert_close(got[key], want[key], rtol=0, atol=1e-5, msg=f"{name}: {key}")
    if name != "ddp":  # the transformer layers are sharded: half the parameters per rank
        full = sum(v.numel() * 4 for v in states["ddp"].values())
        assert all(b["param_bytes"] == pytest.approx(full / 2, rel=0.02) for b in results[name]["bytes"])


def test_attention_dropout_trains_under_fsdp_and_zero3(tmp_path):
    """CPU training with attention dropout: FSDP2's blocks run errorseq's attention maths on their
    unsharded weights (models/dropout_attention.py); ZeRO-3's keep nn.TransformerEncoderLayer's."""
    cases = {name: FP32_CASES[name] for name in ("fsdp", "zero3")}
    _, results, _ = launch_harness(tmp_path, {**MODEL, "dropout": 0.1}, cases)
    for name in cases:
        assert len(results[name]["losses"]) == 4 and all(math.isfinite(x) for x in results[name]["losses"])
