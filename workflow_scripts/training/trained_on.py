"""What a model was trained on, as model.json records it, and predict's check that it feeds the same.

train records (`trained_on`) the experiment's labels and the window extract cut (both from
windows.parquet's notes, data/quality.py), the tokenizer with a digest of its vocabulary, and the
call inputs beside the sequence; training/run.py adds the experiment's name. predict
(`check_trained_on`) refuses, in one line naming model.json and the field, a model of another
experiment or other labels, windows of another flank, a tokenizer whose vocabulary changed since
training, and a model.json without these fields (written before they were recorded: retrain).
The score channels a model takes (models/score_channels.py) are recorded too; an older model.json
without them took none.
"""

from __future__ import annotations

from workflow_scripts.artifacts import (
    LABELS_FIELD,
    MODEL_INPUT_COLUMNS_FIELD,
    SCORE_CHANNELS_FIELD,
    TOKENIZER_DIGEST_FIELD,
    WINDOW_FIELD,
)
from workflow_scripts.config.types import ExperimentSection
from workflow_scripts.errors import InputError
from workflow_scripts.tokenization.tokenizers import tokenizer_digest

EXPERIMENT_FIELD = "experiment"
RECORDED = (EXPERIMENT_FIELD, LABELS_FIELD, WINDOW_FIELD, "tokenizer", TOKENIZER_DIGEST_FIELD)
RETRAIN = "retrain the model (snakemake --forcerun train)"


def trained_on(
    windows_notes: dict, tokenizer, input_columns: list[str], score_channels: list[str] | tuple = ()
) -> dict:
    """model.json's record of the training data (the experiment's name aside), from the notes
    extract left in windows.parquet (data/quality.read_notes)."""
    return {
        LABELS_FIELD: windows_notes.get("labels", {}),
        WINDOW_FIELD: windows_notes.get("window", {}),
        "tokenizer": tokenizer.to_dict(),
        TOKENIZER_DIGEST_FIELD: tokenizer_digest(tokenizer),
        MODEL_INPUT_COLUMNS_FIELD: list(input_columns),
        SCORE_CHANNELS_FIELD: list(score_channels),
    }


def check_trained_on(
    saved: dict, config_path: str, experiment: ExperimentSection, flank: int, tokenizer
) -> None:
    """InputError unless the model was trained for `experiment` on windows of `flank` with
    `tokenizer` (loaded from the record, so only its vocabulary can have changed)."""
    for field in RECORDED:
        if field not in saved:
            raise InputError(
                config_path,
                field,
                f"not recorded (written by an older errorseq): {RETRAIN} before predicting",
            )
    check_experiment(saved, config_path, experiment)
    check_window(saved[WINDOW_FIELD], config_path, flank)
    if tokenizer_digest(tokenizer) != saved[TOKENIZER_DIGEST_FIELD]:
        raise InputError(
            config_path,
            TOKENIZER_DIGEST_FIELD,
            f"the tokenizer {saved['tokenizer']} maps tokens to other ids than the one the model was "
            f"trained with: restore that tokenizer or {RETRAIN}",
        )


def check_experiment(saved: dict, config_path: str, experiment: ExperimentSection) -> None:
    if saved[EXPERIMENT_FIELD] != experiment.name:
        raise InputError(
            config_path,
            EXPERIMENT_FIELD,
            f"the model was trained for experiment {saved[EXPERIMENT_FIELD]!r}, not {experiment.name!r} "
            "(another experiment's model?)",
        )
    recorded, expected = saved[LABELS_FIELD], experiment.labels()
    if recorded != expected:
        raise InputError(
            config_path,
            LABELS_FIELD,
            f"the model learnt {versus(recorded)}; experiment {experiment.name!r} is "
            f"{versus(expected)}: {RETRAIN}",
        )


def versus(labels: dict[str, str]) -> str:
    if not labels:
        return "labels that were not recorded"
    return f"{labels.get('error')} (error) vs {labels.get('correct')} (correct)"


def check_window(window: dict, config_path: str, flank: int) -> None:
    if "flank" not in window:
        raise InputError(
            config_path,
            WINDOW_FIELD,
            "no flank recorded: the model was trained on ready-made windows (a sequences table), "
            "so predict cannot cut windows from calls that match them",
        )
    if window["flank"] != flank:
        raise InputError(
            config_path,
            WINDOW_FIELD,
            f"the model was trained on windows of flank {window['flank']} ({window['length']} nt); "
            f"window.flank is {flank} ({2 * flank + 1} nt): set window.flank to {window['flank']} or {RETRAIN}",
        )
