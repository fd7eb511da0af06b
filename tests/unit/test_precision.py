"""calling.base_model.precision: bf16/fp16 scores stay close to fp32, the key travels from the rule's
--config to the forward pass, and a device without fast kernels for it is refused in one line."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest
import torch

from tests.spliceai_fixtures import write_spliceai_h5
from workflow_scripts.calling import device
from workflow_scripts.command_line import path_flags
from workflow_scripts.config.sections import parse_rule_config
from workflow_scripts.data.genome import Genome
from workflow_scripts.errors import InputError
from workflow_scripts.rules import score_base_model

GENES = pl.DataFrame(
    {
        "gene_id": ["plus", "minus"],
        "chrom": ["c1", "c1"],
        "start": [20, 150],
        "end": [400, 580],
        "strand": ["+", "-"],
    }
)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("precision")
    (folder / "weights").mkdir()
    for seed in (3, 4):
        write_spliceai_h5(folder / "weights" / f"model{seed}.h5", seed=seed)
    bases = np.random.default_rng(5).choice(np.frombuffer(b"ACGT", np.uint8), size=600)
    Genome(["c1"], np.array([600]), bases.astype(np.uint8)).save_cached(folder / "genome")
    GENES.write_parquet(folder / "genes.parquet")
    return folder


def score(folder, precision: str, capsys) -> tuple[np.ndarray, str]:
    """The rule's entry point with `precision` in its --config: (donor, acceptor) rows, its log."""
    out = folder / f"{precision}.parquet"
    config = {"calling": {"base_model": {"batch_size": 2, "chunk_length": 100, "precision": precision}}}
    paths = path_flags({"genes": folder / "genes.parquet", "weights": folder / "weights"}, {"scores": out})
    score_base_model.main([*paths, "--genome", str(folder / "genome"), "--config", json.dumps(config)])
    return pl.read_parquet(out).select("donor", "acceptor").to_numpy(), capsys.readouterr().err


@pytest.mark.parametrize("precision", ["bf16", "fp16"])
def test_reduced_precision_scores_are_close_to_fp32(inputs, capsys, monkeypatch, precision):
    monkeypatch.setattr(device, "fast_on", lambda *_: True)  # runs (emulated) on any CPU
    calls: set[tuple[int, torch.dtype]] = set()  # (output channels, output dtype) of each convolution
    convolution = torch.nn.functional.conv1d

    def recorded(x, weight, *args, **kwargs):
        calls.add((weight.shape[0], convolution(x, weight, *args, **kwargs).dtype))
        return convolution(x, weight, *args, **kwargs)

    monkeypatch.setattr(torch.nn.functional, "conv1d", recorded)
    reference, _ = score(inputs, "fp32", capsys)
    assert {dtype for _, dtype in calls} == {torch.float32}
    calls.clear()
    reduced, _ = score(inputs, precision, capsys)
    hidden = {channels for channels, _ in calls} - {3}
    assert calls == {(3, torch.float32)} | {(c, device.PRECISIONS[precision]) for c in hidden}  # fp32 logits
    difference = np.abs(reduced - reference)
    assert reference.max() > 0.3 and 0 < difference.max() < 0.03, difference.max()
    assert difference.mean() < 3e-3, difference.mean()


@pytest.mark.parametrize("precision", ["bf16", "fp16"])
def test_reduced_precision_without_fast_kernels_is_one_line(monkeypatch, precision):
    monkeypatch.setattr(device, "fast_on", lambda *_: False)
    with pytest.raises(InputError) as caught:
        device.precision_dtype(precision, torch.device("cpu"))
    assert caught.value.field == "calling.base_model.precision"
    assert "\n" not in str(caught.value) and "~10x slower than fp32" in str(caught.value)
    assert device.precision_dtype("fp32", torch.device("cpu")) == torch.float32


def test_precision_key_defaults_to_fp32_and_takes_only_known_values():
    assert parse_rule_config("{}", required=("calling",))["calling"]["base_model"]["precision"] == "fp32"
    with pytest.raises(InputError, match="precision"):
        parse_rule_config(json.dumps({"calling": {"base_model": {"precision": "fp8"}}}))


def test_benchmark_counts_calls_changed_at_one_half():
    from benchmarks.scoring.precision import changed_calls

    keys = {"gene_id": ["g"] * 4, "position": [1, 2, 3, 4]}
    fp32 = pl.DataFrame({**keys, "donor": [0.5, 0.49, 0.9, 0.0], "acceptor": [0.7, 0.0, 0.0, 0.1]})
    bf16 = pl.DataFrame({**keys, "donor": [0.49, 0.5, 0.9, 0.0], "acceptor": [0.7, 0.0, 0.0, 0.1]})
    assert changed_calls(fp32, bf16) == (3, 2, pytest.approx(0.01))  # 3 fp32 calls, 2 flipped
