"""A model trained with score channels in predict_calls, evaluate and explain: fed the channels
from the calls or windows, scored as evaluate scores, refused without them (one line)."""

from __future__ import annotations

import json
import re

import numpy as np
import polars as pl
import pytest
import torch

from tests.evaluation_fixtures import MODEL, write_buckets
from tests.score_channel_fixtures import (  # noqa: F401  (one_thread: a fixture)
    CNN,
    PEAK_REACH,
    one_thread,
    train_small_cnn,
    windows_with_score_channels,
)
from tests.unit.test_predict import evaluated, one_line_error, run_predict  # noqa: F401  (the fixture)
from workflow_scripts.artifacts import ATTRIBUTION_COLUMNS, SCORE_CHANNELS_FIELD
from workflow_scripts.evaluation.predict import load_trained_model, predict_split
from workflow_scripts.io_utils import write_parquet
from workflow_scripts.models.builtin import build_model
from workflow_scripts.models.call_inputs import feature_width, saved_input_columns
from workflow_scripts.models.score_channels import SCORE_CHANNEL_COLUMNS
from workflow_scripts.rules.explain import main as explain_main
from workflow_scripts.tokenization.tokenizers import NucleotideTokenizer
from workflow_scripts.training.trained_on import trained_on

CHANNELS = list(SCORE_CHANNEL_COLUMNS)


def with_profiles(frame: pl.DataFrame, seed: int = 0) -> pl.DataFrame:
    """`frame` with random donor/acceptor profiles, one score per base of its sequence."""
    rng = np.random.default_rng(seed)
    lengths = frame["sequence"].str.len_chars().to_list()
    return frame.with_columns(
        pl.Series(name, [rng.uniform(0, 1, n).tolist() for n in lengths], dtype=pl.List(pl.Float32))
        for name in CHANNELS
    )


def channel_model(directory, saved: dict) -> dict:
    """A random model like `saved`'s (its call inputs too) that also takes the score channels."""
    torch.manual_seed(1)
    n_features = feature_width(saved_input_columns(saved))
    model = build_model(MODEL, 7, saved["max_tokens"], n_features=n_features, n_score_channels=2)
    torch.save(model.state_dict(), directory / "channels.pt")
    (directory / "channels.json").write_text(json.dumps({**saved, SCORE_CHANNELS_FIELD: CHANNELS}))
    return {"model": directory / "channels.pt", "model-config": directory / "channels.json"}


def test_predict_feeds_the_calls_channels_and_scores_as_evaluate_does(evaluated, tmp_path):  # noqa: F811
    model = channel_model(tmp_path, json.loads(evaluated["model_config"].read_text()))
    windows = with_profiles(pl.read_parquet(evaluated["windows"]))
    write_parquet(windows, tmp_path / "windows.parquet")
    test_calls = windows.filter(pl.col("split") == "test")
    write_parquet(test_calls, tmp_path / "calls.parquet")
    scored = run_predict(
        evaluated,
        tmp_path / "calls.parquet",
        tmp_path / "out.parquet",
        model=model["model"],
        **{"model-config": model["model-config"]},
    )
    loaded, saved = load_trained_model(str(model["model"]), str(model["model-config"]))
    data, probs = predict_split(
        loaded,
        saved,
        str(tmp_path / "windows.parquet"),
        str(write_buckets(tmp_path / "windows.parquet", tmp_path)["manifest"]),
        "test",
        16,
    )
    by_id = dict(zip(data.ids, probs))
    np.testing.assert_allclose(scored["p_error"].to_numpy(), [by_id[i] for i in scored["id"]], rtol=1e-6)
    shuffled = with_profiles(test_calls, seed=1)  # other scores: other probabilities
    write_parquet(shuffled, tmp_path / "other.parquet")
    other = run_predict(
        evaluated,
        tmp_path / "other.parquet",
        tmp_path / "other_out.parquet",
        model=model["model"],
        **{"model-config": model["model-config"]},
    )
    assert not np.allclose(other["p_error"].to_numpy(), scored["p_error"].to_numpy())


def test_predict_refuses_calls_without_a_channel_in_one_line_naming_it(evaluated, tmp_path, capsys):  # noqa: F811
    model = channel_model(tmp_path, json.loads(evaluated["model_config"].read_text()))
    calls = with_profiles(pl.read_parquet(evaluated["windows"]).head(20)).drop("acceptor_scores")
    write_parquet(calls, tmp_path / "calls.parquet")
    line = one_line_error(
        capsys,
        lambda: run_predict(
            evaluated,
            tmp_path / "calls.parquet",
            tmp_path / "o.parquet",
            model=model["model"],
            **{"model-config": model["model-config"]},
        ),
    )
    assert line == (
        f"errorseq: error: {tmp_path / 'calls.parquet'}: column 'acceptor_scores': required column missing: "
        f"the model reads it ({model['model-config']} lists it)"
    )


def run_explain(windows, model: dict, out, **explain) -> tuple[pl.DataFrame, str]:
    """The explain entry point; (attribution.tsv, its log)."""
    config = {"explain": {"max_windows": 1, "kmer_k": 3, **explain}}
    argv = [f"--windows={windows}", f"--model={model['model']}", f"--model-config={model['model-config']}"]
    argv += ["--experiment=toy", f"--out-attribution={out / 'attribution.tsv'}"]
    explain_main(
        [*argv, f"--out-kmers={out / 'kmers.tsv'}", f"--out-dir={out}", "--config", json.dumps(config)]
    )
    return pl.read_csv(out / "attribution.tsv", separator="\t")


@pytest.mark.parametrize("method", ["gradient_x_input", "in_silico_mutagenesis"])
def test_explain_feeds_the_channels_to_a_model_trained_with_them(tmp_path, method):
    windows = windows_with_score_channels(tmp_path, n=40)["windows"]  # short windows: fast mutagenesis
    saved = {"model": MODEL, "max_tokens": 128, **trained_on({}, NucleotideTokenizer(1), [])}
    attribution = run_explain(windows, channel_model(tmp_path, saved), tmp_path / "explain", method=method)
    assert attribution.columns == list(ATTRIBUTION_COLUMNS)
    assert attribution["importance"].abs().sum() > 0
    channels = attribution.select(CHANNELS)
    if method == "gradient_x_input":
        assert channels.null_count().sum_horizontal().item() == 0 and channels.to_numpy().any()
    else:  # mutagenesis perturbs bases only
        assert channels.null_count().sum_horizontal().item() == 2 * attribution.height


def test_channel_attribution_finds_the_acceptor_peak_that_makes_an_error(tmp_path, one_thread, capsys):  # noqa: F811
    """The label lives in an acceptor peak within PEAK_REACH of the centre (the site): a model
    trained on it attributes error windows to acceptor scores there, not to donor scores."""
    paths = windows_with_score_channels(tmp_path, n=400)
    torch.save(train_small_cnn(paths, CHANNELS).state_dict(), tmp_path / "model.pt")
    saved = {"model": CNN, "max_tokens": 128, **trained_on({}, NucleotideTokenizer(1), [], CHANNELS)}
    (tmp_path / "model.json").write_text(json.dumps(saved))
    model = {"model": tmp_path / "model.pt", "model-config": tmp_path / "model.json"}
    attribution = run_explain(paths["windows"], model, tmp_path / "explain", max_windows=50)
    errors = attribution.filter(pl.col("class") == "error")
    top = errors.sort("acceptor_scores", descending=True).head(5)["position"].to_numpy()
    assert (np.abs(top) <= PEAK_REACH).all(), top
    assert errors["acceptor_scores"].sum() > 10 * errors["donor_scores"].abs().sum()
    log = capsys.readouterr().err
    assert re.search(
        r"score channels pushing towards error most: .*acceptor_scores in all windows \+[\d.]+ in all, most at \[",
        log,
    ), log
