"""predict_calls: a trained model applied to a new calls table (workflow_scripts/inference/).

The fixture runs the real chain on a small demo genome: extract's windows → bucket manifest →
a (randomly initialised) model → the evaluate rule, then scores calls with predict_calls.
"""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from tests.evaluation_fixtures import FLANK, run_evaluate, write_buckets, write_untrained_model
from workflow_scripts.artifacts import MODEL_INPUT_COLUMNS_FIELD, NEW_CALL_PREDICTION_COLUMNS
from workflow_scripts.command_line import path_flags
from workflow_scripts.config.types import ExperimentSection
from workflow_scripts.data.demo import generate_demo
from workflow_scripts.errors import InputError
from workflow_scripts.io_utils import write_parquet
from workflow_scripts.rules.extract import main as extract_main
from workflow_scripts.rules.predict_calls import main as predict_main
from workflow_scripts.tokenization.bpe import save_hf_tokenizer, train_bpe
from workflow_scripts.tokenization.tokenizers import NucleotideTokenizer, load_tokenizer, tokenizer_digest
from workflow_scripts.training.trained_on import check_trained_on, trained_on

EXPERIMENT = {"name": "fp_vs_tp", "error_label": "FP", "correct_label": "TP"}
BATCH_SIZE = 16


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory):
    directory = tmp_path_factory.mktemp("predict")
    genome, calls = directory / "genome.fa", directory / "calls.tsv"
    generate_demo(genome, calls, seed=3, n_genes=150, calls_per_gene=3)
    windows = directory / "windows.parquet"
    extract_config = {"experiment": EXPERIMENT, "window": {"flank": FLANK}, "split": {}}
    extract_main(
        ["--genome", str(genome), *path_flags({"calls": calls}, {"windows": windows})]
        + ["--config", json.dumps(extract_config)]
    )
    buckets = write_buckets(windows, directory)
    model = write_untrained_model(
        directory, 3001, ("score", "splice_type"), windows=windows, experiment=EXPERIMENT["name"]
    )
    evaluation = run_evaluate(
        windows,
        buckets["manifest"],
        model,
        directory,
        config={"evaluate": {"batch_size": BATCH_SIZE, "bootstrap_replicates": 20}},
    )
    return {"genome": genome, "calls": calls, "windows": windows, **model, **evaluation}


def run_predict(evaluated, calls, out, chunk_size=200_000, flank=FLANK, experiment=EXPERIMENT, **overrides):
    paths = {
        "calls": calls,
        "genome": evaluated["genome"],
        "model": evaluated["model"],
        "model-config": evaluated["model_config"],
        "metrics": evaluated["metrics"],
        **overrides,
    }
    config = {
        "experiment": experiment,
        "predict": {"chunk_size": chunk_size},
        "window": {"flank": flank},
        "evaluate": {"batch_size": BATCH_SIZE},
    }
    argv = [f"--{name}={value}" for name, value in paths.items()]
    predict_main([*argv, *path_flags({}, {"predictions": out}), "--config", json.dumps(config)])
    return pl.read_parquet(out)


def test_scoring_the_test_split_reproduces_evaluate_exactly(evaluated, tmp_path):
    test_calls = pl.read_parquet(evaluated["windows"]).filter(pl.col("split") == "test")
    write_parquet(test_calls, tmp_path / "test_calls.parquet")
    scored = run_predict(evaluated, tmp_path / "test_calls.parquet", tmp_path / "out.parquet")
    predictions = pl.read_parquet(evaluated["predictions"])
    threshold = json.loads(evaluated["metrics"].read_text())["threshold_choice"]["threshold"]
    assert scored["id"].to_list() == predictions["id"].to_list()
    np.testing.assert_array_equal(scored["p_error"].to_numpy(), predictions["prob"].to_numpy())
    assert (scored["predicted_error"].to_numpy() == (predictions["pred"].to_numpy() == 1)).all()
    assert (scored["predicted_error"] == (scored["p_error"] >= threshold)).all()
    assert pl.read_parquet_metadata(tmp_path / "out.parquet")["threshold"] == repr(threshold)


def test_every_input_column_is_kept_in_order_with_its_values(evaluated, tmp_path):
    calls = pl.read_csv(evaluated["calls"], separator="\t", infer_schema=False).head(60)
    calls = calls.with_columns(
        pl.Series("transcript", [f"t{i}" for i in range(60)]), pl.lit("x").alias("note")
    )
    calls.write_csv(tmp_path / "calls.tsv", separator="\t")
    scored = run_predict(evaluated, tmp_path / "calls.tsv", tmp_path / "out.parquet")
    assert scored.columns == [*calls.columns, *NEW_CALL_PREDICTION_COLUMNS]
    assert_frame_equal(scored.select(calls.columns).with_columns(pl.col("position").cast(pl.String)), calls)
    assert scored["p_error"].is_between(0, 1).all()


def test_streamed_in_small_chunks_equals_one_chunk(evaluated, tmp_path):
    whole = run_predict(evaluated, evaluated["calls"], tmp_path / "whole.parquet")
    streamed = run_predict(evaluated, evaluated["calls"], tmp_path / "streamed.parquet", chunk_size=7)
    assert whole.height == pl.read_csv(evaluated["calls"], separator="\t").height
    assert_frame_equal(streamed, whole)
    assert not list(tmp_path.glob(".*parts*"))  # the parts are gone


def test_calls_without_pred_type_or_gene_id_are_scored(evaluated, tmp_path):
    """Bare sites are enough for a sequence-only model (model.call_inputs: [])."""
    calls = pl.read_csv(evaluated["calls"], separator="\t").select("chrom", "position", "strand").head(10)
    calls.write_parquet(tmp_path / "sites.parquet")
    sequence_only = write_untrained_model(tmp_path, 3001, windows=evaluated["windows"], experiment="fp_vs_tp")
    scored = run_predict(
        evaluated,
        tmp_path / "sites.parquet",
        tmp_path / "out.parquet",
        model=sequence_only["model"],
        **{"model-config": sequence_only["model_config"]},
    )
    assert scored.columns == ["chrom", "position", "strand", *NEW_CALL_PREDICTION_COLUMNS]


def one_line_error(capsys, call) -> str:
    with pytest.raises(SystemExit) as stopped:
        from workflow_scripts.errors import run_cli

        run_cli(lambda argv: call())
    assert stopped.value.code == 2
    lines = [line for line in capsys.readouterr().err.splitlines() if not line.startswith("predict: ")]
    assert len(lines) == 1, lines  # progress lines aside, the error is one line
    return lines[0]


def test_a_missing_model_is_one_line_naming_it(evaluated, tmp_path, capsys):
    missing = tmp_path / "none" / "model.pt"
    line = one_line_error(
        capsys, lambda: run_predict(evaluated, evaluated["calls"], tmp_path / "o.parquet", model=missing)
    )
    assert line.startswith(f"errorseq: error: {missing}: model: file does not exist")


@pytest.mark.parametrize("column", ["strand", "position"])
def test_a_calls_table_without_a_site_column_is_one_line_naming_it(evaluated, tmp_path, capsys, column):
    calls = pl.read_csv(evaluated["calls"], separator="\t").drop(column)
    calls.write_csv(tmp_path / "calls.tsv", separator="\t")
    line = one_line_error(
        capsys, lambda: run_predict(evaluated, tmp_path / "calls.tsv", tmp_path / "o.parquet")
    )
    assert line.startswith(
        f"errorseq: error: {tmp_path / 'calls.tsv'}: column '{column}': required column missing"
    )


def test_a_column_the_model_reads_must_be_there(evaluated, tmp_path, capsys):
    config = evaluated["model_config"]
    saved = json.loads(config.read_text())
    assert saved[MODEL_INPUT_COLUMNS_FIELD] == ["score", "splice_type"]
    calls = pl.read_csv(evaluated["calls"], separator="\t").drop("score")
    calls.write_csv(tmp_path / "calls.tsv", separator="\t")
    line = one_line_error(
        capsys, lambda: run_predict(evaluated, tmp_path / "calls.tsv", tmp_path / "o.parquet")
    )
    assert line == (
        f"errorseq: error: {tmp_path / 'calls.tsv'}: column 'score': required column missing: "
        f"the model reads it ({config} lists it)"
    )


@pytest.mark.parametrize(
    ("column", "value", "problem"),
    [
        ("position", "12x", "not an integer"),
        ("strand", "*", "strand must be '+' or '-'"),
        ("chrom", "chrX", "chromosome 'chrX' not in genome"),
        ("position", "99999999", "position outside the chromosome"),
    ],
)
def test_a_bad_value_names_the_file_column_and_row(evaluated, tmp_path, capsys, column, value, problem):
    calls = pl.read_csv(evaluated["calls"], separator="\t", infer_schema=False).head(30)
    calls = calls.with_columns(
        pl.when(pl.int_range(pl.len()) == 24).then(pl.lit(value)).otherwise(pl.col(column)).alias(column)
    )
    calls.write_csv(tmp_path / "calls.tsv", separator="\t")
    line = one_line_error(
        capsys, lambda: run_predict(evaluated, tmp_path / "calls.tsv", tmp_path / "o.parquet", chunk_size=10)
    )
    assert line.startswith(f"errorseq: error: {tmp_path / 'calls.tsv'}: column '{column}' row 25: {problem}")
    assert not (tmp_path / "o.parquet").exists()


def test_a_column_named_like_an_output_is_refused(evaluated, tmp_path, capsys):
    calls = pl.read_csv(evaluated["calls"], separator="\t").with_columns(pl.lit(0.5).alias("p_error"))
    calls.write_csv(tmp_path / "calls.tsv", separator="\t")
    line = one_line_error(
        capsys, lambda: run_predict(evaluated, tmp_path / "calls.tsv", tmp_path / "o.parquet")
    )
    assert line.startswith(f"errorseq: error: {tmp_path / 'calls.tsv'}: column 'p_error': reserved name")


def test_a_table_with_a_header_only_gives_an_empty_file_with_the_columns(evaluated, tmp_path):
    (tmp_path / "calls.tsv").write_text("chrom\tposition\tstrand\tnote\tscore\tsplice_type\n")
    scored = run_predict(evaluated, tmp_path / "calls.tsv", tmp_path / "out.parquet")
    assert scored.height == 0
    assert scored.columns == [
        "chrom",
        "position",
        "strand",
        "note",
        "score",
        "splice_type",
        *NEW_CALL_PREDICTION_COLUMNS,
    ]


# ---- the model must be fed as it was trained (model.json: training/trained_on.py, issue 23) -------
def refused(evaluated, tmp_path, capsys, model=None, **settings) -> str:
    """predict's one-line refusal; nothing written."""
    model = model or {"model": evaluated["model"], "model-config": evaluated["model_config"]}
    out = tmp_path / "refused.parquet"
    line = one_line_error(
        capsys,
        lambda: run_predict(
            evaluated,
            evaluated["calls"],
            out,
            model=model["model"],
            **{"model-config": model["model-config"]},
            **settings,
        ),
    )
    assert not out.exists() and not list(tmp_path.glob(".*refused*"))
    return line


def edited_model(evaluated, tmp_path, **fields) -> dict:
    """A copy of the fixture's model whose model.json has `fields` replaced (None: removed)."""
    saved = json.loads(evaluated["model_config"].read_text())
    for name, value in fields.items():
        saved[name] = value
        if value is None:
            del saved[name]
    (tmp_path / "model.json").write_text(json.dumps(saved))
    return {"model": evaluated["model"], "model-config": tmp_path / "model.json"}


def test_model_json_records_what_predict_must_match(evaluated):
    saved = json.loads(evaluated["model_config"].read_text())
    assert saved["experiment"] == "fp_vs_tp" and saved["labels"] == {"error": "FP", "correct": "TP"}
    assert saved["window"] == {"flank": FLANK, "length": 2 * FLANK + 1, "site_offset": FLANK}
    assert saved["tokenizer"] == {"kind": "nucleotide", "k": 1}
    assert saved["tokenizer_sha256"] == tokenizer_digest(NucleotideTokenizer(1))
    assert saved[MODEL_INPUT_COLUMNS_FIELD] == ["score", "splice_type"]


def test_a_flank_other_than_the_models_is_refused(evaluated, tmp_path, capsys):
    line = refused(evaluated, tmp_path, capsys, flank=50)
    assert line == (
        f"errorseq: error: {evaluated['model_config']}: window: the model was trained on windows of "
        f"flank {FLANK} ({2 * FLANK + 1} nt); window.flank is 50 (101 nt): set window.flank to {FLANK} "
        "or retrain the model (snakemake --forcerun train)"
    )


def test_another_experiments_model_is_refused(evaluated, tmp_path, capsys):
    other = {"name": "fn_vs_tn", "error_label": "FN", "correct_label": "TN"}
    line = refused(evaluated, tmp_path, capsys, experiment=other)
    assert line == (
        f"errorseq: error: {evaluated['model_config']}: experiment: the model was trained for "
        "experiment 'fp_vs_tp', not 'fn_vs_tn' (another experiment's model?)"
    )


def test_the_same_name_with_other_labels_is_refused(evaluated, tmp_path, capsys):
    relabelled = {**EXPERIMENT, "error_label": "FN"}
    line = refused(evaluated, tmp_path, capsys, experiment=relabelled)
    assert line == (
        f"errorseq: error: {evaluated['model_config']}: labels: the model learnt FP (error) vs TP "
        "(correct); experiment 'fp_vs_tp' is FN (error) vs TP (correct): retrain the model "
        "(snakemake --forcerun train)"
    )


@pytest.mark.parametrize("field", ["labels", "window", "tokenizer_sha256"])
def test_a_model_json_from_before_the_record_is_refused_with_retrain(evaluated, tmp_path, capsys, field):
    line = refused(evaluated, tmp_path, capsys, edited_model(evaluated, tmp_path, **{field: None}))
    assert line == (
        f"errorseq: error: {tmp_path / 'model.json'}: {field}: not recorded (written by an older "
        "errorseq): retrain the model (snakemake --forcerun train) before predicting"
    )


def test_a_model_trained_on_a_sequences_table_is_refused(evaluated, tmp_path, capsys):
    line = refused(evaluated, tmp_path, capsys, edited_model(evaluated, tmp_path, window={}))
    assert line.startswith(
        f"errorseq: error: {tmp_path / 'model.json'}: window: no flank recorded: the model was trained "
        "on ready-made windows (a sequences table)"
    )


def test_a_model_pt_of_other_inputs_than_model_json_says_is_one_line(evaluated, tmp_path, capsys):
    model = edited_model(evaluated, tmp_path, **{MODEL_INPUT_COLUMNS_FIELD: ["score"]})
    line = refused(evaluated, tmp_path, capsys, model)
    assert line.startswith(
        f"errorseq: error: {evaluated['model']}: model: does not fit the model {tmp_path / 'model.json'} "
        "describes (size mismatch for "
    )


def test_a_tokenizer_whose_vocabulary_changed_since_training_is_refused(tmp_path):
    """A learnt (BPE) tokenizer lives in its own directory; one relearnt there on other windows
    maps tokens to other ids, which model.json's tokenizer_sha256 catches."""
    pytest.importorskip("transformers")
    directory = tmp_path / "tokenizer"
    rng = np.random.default_rng(0)
    save_hf_tokenizer(
        train_bpe(["".join(rng.choice(list("ACGT"), 200)) for _ in range(50)], 40, 2), directory
    )
    tokenizer = load_tokenizer({"kind": "hf", "path": str(directory)})
    saved = {
        "experiment": EXPERIMENT["name"],
        **trained_on(
            {"window": {"flank": 5, "length": 11}, "labels": {"error": "FP", "correct": "TP"}}, tokenizer, []
        ),
    }
    experiment = ExperimentSection.from_completed(EXPERIMENT)
    check_trained_on(saved, "model.json", experiment, 5, load_tokenizer(saved["tokenizer"]))
    save_hf_tokenizer(train_bpe(["ACGGT" * 40, "TTGCA" * 40] * 25, 40, 2), directory)
    with pytest.raises(
        InputError, match="^model.json: tokenizer_sha256: the tokenizer .* maps tokens to other ids"
    ):
        check_trained_on(saved, "model.json", experiment, 5, load_tokenizer(saved["tokenizer"]))


@pytest.mark.parametrize("suffix", ["tsv", "parquet"])
def test_a_users_chromosome_length_column_never_overrides_the_genome_index(
    evaluated, tmp_path, capsys, suffix
):
    """A calls table that carries its own chrom_length (some tools add one), wrong: the call past
    the chromosome's end is still refused, the genome index decides (issue 48)."""
    calls = pl.read_csv(evaluated["calls"], separator="\t", infer_schema=False).head(30)
    past_end = pl.when(pl.int_range(pl.len()) == 24).then(pl.lit("99999999")).otherwise(pl.col("position"))
    calls = calls.with_columns(past_end.alias("position"), pl.lit("999999999").alias("chrom_length"))
    path = tmp_path / f"calls.{suffix}"
    calls.write_csv(path, separator="\t") if suffix == "tsv" else calls.write_parquet(path)
    line = one_line_error(capsys, lambda: run_predict(evaluated, path, tmp_path / "o.parquet", chunk_size=10))
    assert line.startswith(
        f"errorseq: error: {path}: column 'position' row 25: position outside the chromosome"
    )
