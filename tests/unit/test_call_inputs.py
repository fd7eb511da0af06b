"""The base model's call as model input (model.call_inputs): features, models, train → predict."""

import numpy as np
import polars as pl
import pytest
import torch

from tests.train_fixtures import make_training_inputs
from workflow_scripts.errors import InputError
from workflow_scripts.models.builtin import build_model
from workflow_scripts.models.call_inputs import (
    LOGIT_SCALE,
    feature_matrix,
    feature_width,
    resolve_input_columns,
    windows_input_columns,
)
from workflow_scripts.tokenization.tokenizers import load_tokenizer
from workflow_scripts.training.batches import BatchCollator, load_split, model_inputs

CALLS = pl.DataFrame({"score": [0.5, 0.99, 0.0], "splice_type": ["donor", "acceptor", "donor"]})


def test_feature_matrix_holds_the_score_its_logit_and_the_splice_type():
    features = feature_matrix(CALLS, ["score", "splice_type"], "calls.tsv")
    assert features.shape == (3, feature_width(["score", "splice_type"])) == (3, 3)
    assert features[:, 0] == pytest.approx([0.5, 0.99, 0.0])
    assert features[0, 1] == pytest.approx(0.0)
    assert features[1, 1] == pytest.approx(np.log(99) / LOGIT_SCALE, rel=1e-5)
    assert np.isfinite(features[2, 1]) and features[2, 1] < -1  # a score of 0 is clipped, not -inf
    assert features[:, 2].tolist() == [0.0, 1.0, 0.0]
    assert feature_matrix(CALLS, [], "calls.tsv") is None


def test_auto_takes_the_call_columns_present_in_every_row():
    assert resolve_input_columns("auto", CALLS, "w") == ["score", "splice_type"]
    assert resolve_input_columns("auto", CALLS.select("splice_type"), "w") == ["splice_type"]
    with_gap = CALLS.with_columns(pl.Series("score", [0.5, None, 0.1]))
    assert resolve_input_columns("auto", with_gap, "w") == ["splice_type"]
    assert resolve_input_columns([], CALLS, "w") == []


@pytest.mark.parametrize(
    ("frame", "columns", "field"),
    [
        (CALLS.select("splice_type"), ["score"], "score"),
        (CALLS.with_columns(pl.Series("score", [0.5, 1.5, 0.1])), ["score"], "score"),
        (
            CALLS.with_columns(pl.Series("splice_type", ["donor", "intron", "donor"])),
            ["splice_type"],
            "splice_type",
        ),
    ],
)
def test_asked_for_columns_that_are_missing_or_bad_name_the_file_and_field(frame, columns, field):
    with pytest.raises(InputError) as raised:
        resolve_input_columns(columns, frame, "windows.parquet")
    assert raised.value.source == "windows.parquet" and raised.value.field == field


def test_the_fused_model_answers_to_the_score_and_the_plain_one_needs_none():
    torch.manual_seed(0)
    cfg = {"arch": "cnn", "d_model": 8, "n_layers": 1, "kernel_size": 3, "dropout": 0.0}
    fused = build_model(cfg, vocab_size=8, max_tokens=32, n_features=3).eval()
    ids, mask = torch.randint(2, 7, (2, 20)), torch.ones(2, 20, dtype=torch.bool)
    low = torch.tensor([[0.1, -0.2, 0.0]] * 2)
    high = torch.tensor([[0.9, 0.2, 0.0]] * 2)
    with torch.no_grad():
        assert not torch.allclose(fused(ids, mask, low), fused(ids, mask, high))
        with pytest.raises(ValueError, match="call input"):
            fused(ids, mask)
        plain = build_model(cfg, vocab_size=8, max_tokens=32).eval()
        assert plain(ids, mask).shape == (2, 2)


def windows_with_a_score(directory, score_carries_label: bool):
    """The motif-free training set: the label lives in the score only (or nowhere)."""
    paths = make_training_inputs(directory, n=400, seed=5)
    windows = pl.read_parquet(paths["windows"])
    rng = np.random.default_rng(1)
    label = windows["label"].to_numpy()
    score = np.where(label == 1, rng.uniform(0.5, 0.7, len(label)), rng.uniform(0.6, 0.99, len(label)))
    if not score_carries_label:
        score = rng.uniform(0.5, 0.99, len(label))
    sequences = ["".join(rng.choice(list("ACGT"), n)) for n in windows["length"].to_list()]
    windows.with_columns(
        pl.Series("sequence", sequences), pl.Series("score", score), pl.lit("donor").alias("splice_type")
    ).write_parquet(paths["windows"])
    return paths


def test_batches_carry_the_features_only_when_the_model_takes_them(tmp_path):
    paths = windows_with_a_score(tmp_path, score_carries_label=False)
    tokenizer = load_tokenizer({"kind": "nucleotide", "k": 1})
    columns = windows_input_columns("auto", paths["windows"])
    assert columns == ["score", "splice_type"]
    fused = load_split(paths["windows"], paths["manifest"], "train", columns)
    plain = load_split(paths["windows"], paths["manifest"], "train")
    assert plain.features is None and fused.features.shape == (len(fused), 3)
    assert len(model_inputs(BatchCollator(fused, tokenizer, 128)([0, 1]))) == 3
    assert len(model_inputs(BatchCollator(plain, tokenizer, 128)([0, 1]))) == 2
