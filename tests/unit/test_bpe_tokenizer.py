"""The tokenizer rule: learns DNA merges, saves HF format, and feeds bucket's token lengths
(`--tokenizer` with tokenizer.kind bpe)."""

import json

import numpy as np
import polars as pl
import pytest

pytest.importorskip("tokenizers")
pytest.importorskip("transformers")

from tests.train_fixtures import make_training_inputs  # noqa: E402
from workflow_scripts.command_line import path_flags  # noqa: E402
from workflow_scripts.config.types import complete_typed_section  # noqa: E402
from workflow_scripts.errors import InputError  # noqa: E402
from workflow_scripts.rules import bucket, tokenizer  # noqa: E402
from workflow_scripts.tokenization.tokenizers import load_tokenizer, tokenizer_from_config  # noqa: E402

BPE = {"kind": "bpe", "vocab_size": 80}


@pytest.fixture(scope="module")
def learnt(tmp_path_factory):
    directory = tmp_path_factory.mktemp("bpe")
    inputs = make_training_inputs(directory)
    out = directory / "tokenizer"
    tokenizer.main(
        [
            *path_flags({"windows": inputs["windows"]}, {"tokenizer": out}),
            "--config",
            json.dumps({"tokenizer": BPE}),
        ]
    )
    return inputs, out


def test_learnt_tokenizer_loads_in_hf_format_with_dna_merges(learnt):
    _, out = learnt
    assert (out / "tokenizer.json").exists() and (out / "tokenizer_config.json").exists()
    learnt = load_tokenizer({"kind": "hf", "path": str(out)})
    assert learnt.vocab_size == 80 and learnt.pad_id == 0
    vocab = learnt.tokenizer.get_vocab()
    assert {"A", "C", "G", "T", "N", "[MASK]"} <= set(vocab)
    assert any(len(token) >= 3 and set(token) <= set("ACGTN") for token in vocab)  # merges
    encoded = learnt.tokenizer("GATTACAGG")["input_ids"]
    assert encoded[0] == vocab["[CLS]"] and encoded[-1] == vocab["[SEP]"]


def test_bucket_counts_tokens_with_the_learnt_tokenizer(learnt, tmp_path):
    inputs, out = learnt
    manifest, summary = tmp_path / "manifest.parquet", tmp_path / "summary.json"
    config = {"tokenizer": BPE, "bucket": {"n_buckets": 3, "max_tokens_per_batch": 2000, "max_length": 40}}
    bucket.main(
        [
            "--windows",
            str(inputs["windows"]),
            "--tokenizer",
            str(out),
            "--config",
            json.dumps(config),
            "--out-manifest",
            str(manifest),
            "--out-summary",
            str(summary),
        ]
    )
    rows = pl.read_parquet(manifest).join(pl.read_parquet(inputs["windows"]), on="id")
    learnt = load_tokenizer({"kind": "hf", "path": str(out)})
    expected = learnt.sequence_token_lengths(rows["sequence"].to_list())
    np.testing.assert_array_equal(rows["token_length"].to_numpy(), expected)
    assert (expected < rows["length"].to_numpy()).all()  # BPE: tokens != nucleotides
    report = json.loads(summary.read_text())
    assert report["tokenizer"] == {"kind": "hf", "path": str(out), "trust_remote_code": False}
    assert report["n_truncated"] == int((expected > 40).sum()) > 0  # counted, never silent


def test_too_small_vocabulary_is_a_config_error(learnt, tmp_path):
    inputs, _ = learnt
    with pytest.raises(InputError, match="config: tokenizer.vocab_size: 9 is less than the minimum of 10"):
        tokenizer.main(
            [
                *path_flags({"windows": inputs["windows"]}, {"tokenizer": tmp_path / "t"}),
                "--config",
                json.dumps({"tokenizer": {**BPE, "vocab_size": 9}}),
            ]
        )
    assert not (tmp_path / "t").exists()


def test_a_learnt_tokenizer_needs_kind_bpe(learnt, tmp_path):
    inputs, out = learnt
    with pytest.raises(InputError, match="config: tokenizer.kind: nucleotide: a learnt tokenizer directory"):
        bucket.main(
            [
                "--windows",
                str(inputs["windows"]),
                "--tokenizer",
                str(out),
                "--config",
                "{}",
                "--out-manifest",
                str(tmp_path / "m.parquet"),
                "--out-summary",
                str(tmp_path / "s.json"),
            ]
        )


def test_the_model_picks_the_tokenizer_when_kind_is_auto(learnt):
    _, out = learnt
    auto, nucleotide = complete_typed_section("tokenizer", {"k": 2}), complete_typed_section("model", {})
    assert tokenizer_from_config(auto, nucleotide).to_dict() == {"kind": "nucleotide", "k": 2}
    hf_model = complete_typed_section(
        "model", {"backbone": "hf", "path": str(out), "trust_remote_code": True}
    )
    assert tokenizer_from_config(auto, hf_model).to_dict() == {
        "kind": "hf",
        "path": str(out),
        "trust_remote_code": True,
    }
    own = complete_typed_section("tokenizer", {"kind": "hf", "path": str(out)})
    assert tokenizer_from_config(own, nucleotide).to_dict() == {
        "kind": "hf",
        "path": str(out),
        "trust_remote_code": False,
    }
