"""The BPE tokenizer rule's script: learns DNA merges, saves HF format, and feeds bucket's token
lengths (`--tokenizer-dir`)."""

import json

import numpy as np
import polars as pl
import pytest

pytest.importorskip("tokenizers")
pytest.importorskip("transformers")

from tests.train_fixtures import make_training_inputs  # noqa: E402
from workflow_scripts.tokenization import bpe as bpe_tokenizer
from workflow_scripts.bucketing import assign as bucket  # noqa: E402
from workflow_scripts.errors import InputError  # noqa: E402
from workflow_scripts.tokenization.tokenizers import load_tokenizer  # noqa: E402


@pytest.fixture(scope="module")
def learnt(tmp_path_factory):
    directory = tmp_path_factory.mktemp("bpe")
    inputs = make_training_inputs(directory)
    out = directory / "tokenizer"
    bpe_tokenizer.main(["--windows", str(inputs["windows"]), "--vocab-size", "80", "--out-dir", str(out)])
    return inputs, out


def test_learnt_tokenizer_loads_in_hf_format_with_dna_merges(learnt):
    _, out = learnt
    assert (out / "tokenizer.json").exists() and (out / "tokenizer_config.json").exists()
    tokenizer = load_tokenizer({"kind": "hf", "path": str(out)})
    assert tokenizer.vocab_size == 80 and tokenizer.pad_id == 0
    vocab = tokenizer.tokenizer.get_vocab()
    assert {"A", "C", "G", "T", "N", "[MASK]"} <= set(vocab)
    assert any(len(token) >= 3 and set(token) <= set("ACGTN") for token in vocab)  # merges
    encoded = tokenizer.tokenizer("GATTACAGG")["input_ids"]
    assert encoded[0] == vocab["[CLS]"] and encoded[-1] == vocab["[SEP]"]


def test_bucket_counts_tokens_with_the_learnt_tokenizer(learnt, tmp_path):
    inputs, out = learnt
    manifest, summary = tmp_path / "manifest.parquet", tmp_path / "summary.json"
    bucket.main(["--windows", str(inputs["windows"]), "--tokenizer-dir", str(out), "--boundaries", "auto",
                 "--n-buckets", "3", "--max-tokens-per-batch", "2000", "--max-length", "40",
                 "--out-manifest", str(manifest), "--out-summary", str(summary)])
    rows = pl.read_parquet(manifest).join(pl.read_parquet(inputs["windows"]), on="id")
    tokenizer = load_tokenizer({"kind": "hf", "path": str(out)})
    expected = tokenizer.sequence_token_lengths(rows["sequence"].to_list())
    np.testing.assert_array_equal(rows["token_length"].to_numpy(), expected)
    assert (expected < rows["length"].to_numpy()).all()  # BPE: tokens != nucleotides
    report = json.loads(summary.read_text())
    assert report["tokenizer"] == {"kind": "hf", "path": str(out), "trust_remote_code": False}
    assert report["n_truncated"] == int((expected > 40).sum()) > 0  # counted, never silent


def test_too_small_vocabulary_is_a_config_error(learnt, tmp_path):
    inputs, _ = learnt
    with pytest.raises(InputError, match="tokenizer.vocab_size"):
        bpe_tokenizer.main(["--windows", str(inputs["windows"]), "--vocab-size", "5", "--out-dir", str(tmp_path)])
