"""Score channels with Hugging Face tokenizers and backbones: BPE tokens take the mean score over
the bases their offsets cover; a transformers BERT and DNABERT-2-style remote code (no
inputs_embeds) take the channels through their input embeddings; model.json round trip."""

import json

import numpy as np
import polars as pl
import pytest
import torch
from torch import nn

pytest.importorskip("transformers")

from tests.hf_fixtures import save_remote_code_model, save_tiny_bert  # noqa: E402
from tests.score_channel_fixtures import windows_with_score_channels  # noqa: E402
from workflow_scripts.errors import InputError  # noqa: E402
from workflow_scripts.evaluation.predict import load_trained_model  # noqa: E402
from workflow_scripts.models.builtin import build_model  # noqa: E402
from workflow_scripts.models.hf_score_channels import scores_added  # noqa: E402
from workflow_scripts.models.score_channels import SCORE_CHANNEL_COLUMNS, ScoreProjection  # noqa: E402
from workflow_scripts.tokenization.tokenizers import load_tokenizer  # noqa: E402
from workflow_scripts.training.batches import BatchCollator, load_split, model_inputs  # noqa: E402


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    """Windows with score channels, a tiny BERT with a BPE tokenizer learnt on them, and a model
    with its own code (like DNABERT-2)."""
    directory = tmp_path_factory.mktemp("scored")
    paths = windows_with_score_channels(directory, n=80)
    sequences = pl.read_parquet(paths["windows"])["sequence"].to_list()
    (directory / "remote").mkdir()
    return (
        paths,
        save_tiny_bert(directory / "bert", sequences),
        save_remote_code_model(directory / "remote", sequences),
    )


def test_bpe_tokens_take_the_mean_score_of_the_bases_they_cover(scored):
    paths, bert, _ = scored
    tokenizer = load_tokenizer({"kind": "hf", "path": str(bert)})
    data = load_split(paths["windows"], paths["manifest"], "train", (), SCORE_CHANNEL_COLUMNS)
    max_tokens = 20  # shorter than most windows: the centre crop is taken as for the ids
    batch = BatchCollator(data, tokenizer, max_tokens)(list(range(6)))
    assert batch["scores"].shape == (*batch["ids"].shape, 2)
    for row in range(6):
        encoded = tokenizer.tokenizer(data.sequences[row], return_offsets_mapping=True)
        ids, offsets = encoded["input_ids"], encoded["offset_mapping"]
        keep = list(range(len(ids)))
        if len(ids) > max_tokens:
            left = (len(ids) - max_tokens) // 2 + 1
            keep = [0, *range(left, left + max_tokens - 2), len(ids) - 1]
        assert batch["ids"][row, : len(keep)].tolist() == [ids[i] for i in keep]
        profile = data.profiles.window(row)
        for token, index in enumerate(keep):
            start, end = offsets[index]
            expected = profile[start:end].mean(0) if end > start else np.zeros(2)
            assert np.allclose(batch["scores"][row, token].numpy(), expected, atol=1e-6)
        assert not batch["scores"][row, len(keep) :].any()


@pytest.mark.parametrize("remote", [False, True], ids=["bert", "remote_code"])
def test_hf_backbones_take_the_channels_and_round_trip_through_model_json(scored, tmp_path, remote):
    paths, bert, remote_dir = scored
    cfg = {"backbone": "hf", "path": str(remote_dir if remote else bert), "trust_remote_code": remote}
    tokenizer = load_tokenizer({"kind": "hf", "path": cfg["path"], "trust_remote_code": remote})
    model = build_model(cfg, tokenizer.vocab_size, 64, n_score_channels=2).eval()
    data = load_split(paths["windows"], paths["manifest"], "train", (), SCORE_CHANNEL_COLUMNS)
    ids, mask, _, scores = model_inputs(BatchCollator(data, tokenizer, 64)(list(range(4))))
    torch.save({k: v.clone() for k, v in model.state_dict().items()}, tmp_path / "model.pt")
    saved = {"model": cfg, "tokenizer": tokenizer.to_dict(), "max_tokens": 64}
    (tmp_path / "model.json").write_text(json.dumps({**saved, "score_channels": list(SCORE_CHANNEL_COLUMNS)}))
    loaded, _ = load_trained_model(str(tmp_path / "model.pt"), str(tmp_path / "model.json"))
    with torch.no_grad():
        np.testing.assert_allclose(loaded(ids, mask, None, scores), model(ids, mask, None, scores), atol=1e-6)
        assert not torch.allclose(
            model(ids, mask, None, scores), model(ids, mask, None, torch.zeros_like(scores))
        )
    model.train()
    model(ids, mask, None, scores).sum().backward()
    assert model.score_projection.linear.weight.grad.abs().sum() > 0


class EmbedsTwice(nn.Module):
    """A model that runs its input embeddings twice per forward pass (cannot take the channels)."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(8, 4)

    def get_input_embeddings(self) -> nn.Module:
        return self.embed

    def forward(self, ids):
        return self.embed(ids) + self.embed(ids)


def test_a_backbone_that_does_not_embed_once_is_refused_naming_the_key():
    model, projection = EmbedsTwice(), ScoreProjection(2, 4, scale=1.0)
    ids, mask = torch.zeros(1, 3, dtype=torch.long), torch.ones(1, 3, dtype=torch.bool)
    with pytest.raises(InputError, match="model.score_channels: EmbedsTwice cannot take score channels"):
        with scores_added(model, projection, torch.zeros(1, 3, 2), mask):
            model(ids)
