"""Hugging Face backbone: offline loading, the tokenizer adapter, layers for FSDP, MLM wrapping,
and the evaluate round trip (model.json + plain state dict, weights_only)."""

import json

import numpy as np
import polars as pl
import pytest
import torch

pytest.importorskip("transformers")

from tests.hf_fixtures import save_remote_code_model, save_tiny_bert  # noqa: E402
from tests.train_fixtures import make_training_inputs  # noqa: E402
from workflow_scripts.errors import InputError  # noqa: E402
from workflow_scripts.evaluation.evaluate import load_trained_model  # noqa: E402
from workflow_scripts.models.builtin import build_model  # noqa: E402
from workflow_scripts.models.hf import HFSequenceClassifier, centre_crop_ids  # noqa: E402
from workflow_scripts.models.masked_lm import MaskedLanguageModel, encoder_state  # noqa: E402
from workflow_scripts.models.pretrained_encoder import load_pretrained_encoder  # noqa: E402
from workflow_scripts.tokenization.tokenizers import load_tokenizer  # noqa: E402
from workflow_scripts.training.batches import BatchCollator, load_split  # noqa: E402
from workflow_scripts.training.objectives.masking import IGNORE_INDEX, MaskingCollator  # noqa: E402


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    directory = tmp_path_factory.mktemp("data")
    inputs = make_training_inputs(directory)
    sequences = pl.read_parquet(inputs["windows"])["sequence"].to_list()
    model_dir = save_tiny_bert(directory / "tiny_bert", sequences)
    return inputs, model_dir


@pytest.fixture(scope="module")
def remote(tmp_path_factory, tiny):
    """A model directory with its own code, like DNABERT-2 (tests/remote_code_model)."""
    inputs, _ = tiny
    sequences = pl.read_parquet(inputs["windows"])["sequence"].to_list()
    directory = tmp_path_factory.mktemp("remote") / "alibi_bert"
    directory.mkdir()
    return inputs, save_remote_code_model(directory, sequences)


def hf_cfg(model_dir, **extra):
    return {"backbone": "hf", "path": str(model_dir), **extra}


def test_tokenizer_adapter_counts_pads_and_centre_crops(tiny):
    _, model_dir = tiny
    tokenizer = load_tokenizer({"kind": "hf", "path": str(model_dir)})
    seqs = ["ACGT" * 30, "ACG"]
    lengths = tokenizer.sequence_token_lengths(seqs)
    assert lengths[0] < 122 and lengths[1] >= 3  # BPE: fewer tokens than nucleotides, + CLS/SEP
    ids, mask = tokenizer.encode_batch(seqs, max_length=8)
    assert ids.shape == (2, 8) and mask[0].all() and mask[1].sum() == lengths[1]
    assert ids[0, 0] == tokenizer.tokenizer.cls_token_id and ids[0, -1] == tokenizer.tokenizer.sep_token_id
    assert (ids[1][~mask[1]] == tokenizer.pad_id).all()
    assert tokenizer.to_dict() == {"kind": "hf", "path": str(model_dir), "trust_remote_code": False}
    assert centre_crop_ids(list(range(10)), 5) == [0, 3, 4, 5, 9]


def test_missing_model_is_one_clear_offline_error(tmp_path):
    with pytest.raises(InputError, match="no such directory"):
        build_model(hf_cfg(tmp_path / "absent"), 10, 10)
    with pytest.raises(InputError, match="errorseq never downloads"):
        build_model(hf_cfg("nobody-here/not-a-cached-model"), 10, 10)


def test_classifier_logits_layers_and_position_limit(tiny):
    _, model_dir = tiny
    tokenizer = load_tokenizer({"kind": "hf", "path": str(model_dir)})
    model = build_model(hf_cfg(model_dir, gradient_checkpointing=True), tokenizer.vocab_size, 128)
    assert isinstance(model, HFSequenceClassifier) and len(model.blocks) == 2
    assert not any(key.startswith("blocks.") for key in model.state_dict())
    ids, mask = tokenizer.encode_batch(["ACGTTGCA" * 5, "GATTACA"])
    model.train()
    model(ids, mask).sum().backward()  # gradient checkpointing path
    assert model(ids, mask).shape == (2, 2)
    with pytest.raises(InputError, match="max_position_embeddings"):
        build_model(hf_cfg(model_dir), tokenizer.vocab_size, 4096)


def test_masking_and_pretrained_encoder_round_trip(tiny):
    inputs, model_dir = tiny
    tokenizer = load_tokenizer({"kind": "hf", "path": str(model_dir)})
    data = load_split(inputs["windows"], inputs["manifest"], "train")
    collator = MaskingCollator(BatchCollator(data, tokenizer, 64), tokenizer, 0.15, seed=1)
    batch = collator(list(range(8)))
    assert torch.equal(batch["labels"], collator(list(range(8)))["labels"])  # seeded: repeatable
    scored = batch["labels"] != IGNORE_INDEX
    assert scored.any() and not torch.isin(batch["labels"][scored], collator.special).any()
    mlm = MaskedLanguageModel(build_model(hf_cfg(model_dir), tokenizer.vocab_size, 64), tokenizer.vocab_size)
    assert mlm(batch["ids"], batch["mask"]).shape == (*batch["ids"].shape, tokenizer.vocab_size)
    path = model_dir.parent / "encoder.pt"
    torch.save(encoder_state(mlm.state_dict()), path)
    classifier = build_model(hf_cfg(model_dir, init="random"), tokenizer.vocab_size, 64)
    loaded, fresh = load_pretrained_encoder(classifier, path)
    assert loaded > 10 and all("classifier" in key or "pooler" in key for key in fresh)
    key = "hf.bert.embeddings.word_embeddings.weight"
    assert torch.equal(classifier.state_dict()[key], mlm.state_dict()["backbone." + key])


def test_evaluate_rebuilds_the_hf_model_from_model_json(tiny, tmp_path):
    _, model_dir = tiny
    tokenizer = load_tokenizer({"kind": "hf", "path": str(model_dir)})
    model = build_model(hf_cfg(model_dir), tokenizer.vocab_size, 128)
    torch.save({k: v.clone() for k, v in model.state_dict().items()}, tmp_path / "model.pt")
    (tmp_path / "model.json").write_text(
        json.dumps({"model": hf_cfg(model_dir), "tokenizer": tokenizer.to_dict(), "max_tokens": 128})
    )
    loaded, _ = load_trained_model(str(tmp_path / "model.pt"), str(tmp_path / "model.json"))
    ids, mask = tokenizer.encode_batch(["ACGTACGTTT", "GGGCCCAAATTT"])
    model.eval()
    np.testing.assert_allclose(loaded(ids, mask).detach(), model(ids, mask).detach(), atol=1e-6)


def test_hf_model_with_call_inputs_takes_them_and_round_trips(tiny, tmp_path):
    _, model_dir = tiny
    tokenizer = load_tokenizer({"kind": "hf", "path": str(model_dir)})
    model = build_model(hf_cfg(model_dir), tokenizer.vocab_size, 128, n_features=3).eval()
    assert not any(key.startswith("hf.classifier") for key in model.state_dict())  # its own head left
    torch.save({k: v.clone() for k, v in model.state_dict().items()}, tmp_path / "model.pt")
    saved = {"model": hf_cfg(model_dir), "tokenizer": tokenizer.to_dict(), "max_tokens": 128}
    (tmp_path / "model.json").write_text(json.dumps({**saved, "input_columns": ["score", "splice_type"]}))
    loaded, _ = load_trained_model(str(tmp_path / "model.pt"), str(tmp_path / "model.json"))
    ids, mask = tokenizer.encode_batch(["ACGTACGTTT", "GGGCCCAAATTT"])
    low, high = torch.zeros(2, 3), torch.tensor([[1.0, 1.3, 1.0]] * 2)
    with torch.no_grad():
        np.testing.assert_allclose(loaded(ids, mask, low), model(ids, mask, low), atol=1e-6)
        assert not torch.allclose(loaded(ids, mask, low), loaded(ids, mask, high))


def test_model_with_its_own_code_needs_trust_remote_code(remote):
    _, model_dir = remote
    tokenizer = load_tokenizer({"kind": "hf", "path": str(model_dir)})
    with pytest.raises(InputError, match="model.trust_remote_code: the model ships its own code"):
        build_model(hf_cfg(model_dir), tokenizer.vocab_size, 64)


def test_remote_code_model_loads_its_weights_and_takes_windows_past_its_positions(remote, tmp_path):
    """ALiBi: 200 tokens > max_position_embeddings 64; the base model returns a plain tuple."""
    _, model_dir = remote
    tokenizer = load_tokenizer({"kind": "hf", "path": str(model_dir), "trust_remote_code": True})
    cfg = hf_cfg(model_dir, trust_remote_code=True)
    model = build_model(cfg, tokenizer.vocab_size, 200)
    saved = pytest.importorskip("safetensors.torch").load_file(str(model_dir / "model.safetensors"))
    key = "bert.encoder.layer.1.qkv.weight"
    assert torch.equal(model.hf.state_dict()[key], saved[key])
    assert model.blocks is model.hf.bert.encoder.layer
    short_ids, short_mask = tokenizer.encode_batch(["ACGTTGCA", "GATTACA"])  # within the built bias:
    assert model(short_ids, short_mask).shape == (2, 2)  # it was left on the meta device by loading
    ids, mask = tokenizer.encode_batch(["ACGT" * 300, "GATTACA" * 20], 200)
    assert ids.shape[1] == 200 and model(ids, mask).shape == (2, 2)
    mlm = MaskedLanguageModel(build_model(cfg, tokenizer.vocab_size, 200), tokenizer.vocab_size)
    assert mlm(ids, mask).shape == (2, 200, tokenizer.vocab_size)
    torch.save({k: v.clone() for k, v in model.state_dict().items()}, tmp_path / "model.pt")
    (tmp_path / "model.json").write_text(
        json.dumps({"model": cfg, "tokenizer": tokenizer.to_dict(), "max_tokens": 200})
    )
    loaded, _ = load_trained_model(str(tmp_path / "model.pt"), str(tmp_path / "model.json"))
    model.eval()
    np.testing.assert_allclose(loaded(ids, mask).detach(), model(ids, mask).detach(), atol=1e-6)


def test_unsupported_gradient_checkpointing_names_the_key(remote):
    _, model_dir = remote
    with pytest.raises(InputError, match="model.gradient_checkpointing: .* does not support"):
        build_model(hf_cfg(model_dir, trust_remote_code=True, gradient_checkpointing=True), 64, 64)


def test_checkpoint_without_the_encoders_weights_is_refused(remote, tiny, tmp_path):
    """The remote architecture pointed at a plain BERT's weights: every encoder tensor is missing."""
    _, remote_dir = remote
    _, bert_dir = tiny
    for name in ("config.json", "configuration_alibi_bert.py", "modeling_alibi_bert.py"):
        (tmp_path / name).write_bytes((remote_dir / name).read_bytes())
    (tmp_path / "model.safetensors").write_bytes((bert_dir / "model.safetensors").read_bytes())
    with pytest.raises(InputError, match="encoder tensors are not in the checkpoint"):
        build_model(hf_cfg(tmp_path, trust_remote_code=True), 64, 64)
