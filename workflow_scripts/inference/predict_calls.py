"""Score a new calls table with a trained experiment's model (the predict_calls rule's library).

The model is loaded and checked against what model.json records of its training (experiment,
labels, window flank, tokenizer: training/trained_on.py); its windows are tokenised and batched by
evaluate's own code (evaluation/predict.py: `load_trained_model`, `BatchCollator`, `predict` with
the evaluate batch size, on the GPU when there is one), so a call scores exactly as the same
window does in evaluate. The threshold is the experiment's chosen one (metrics.json threshold_choice).
A model trained with score channels (models/score_channels.py) needs them in the calls table:
`donor_scores` and `acceptor_scores`, a list per call with one score per base of its window in the
window's reading direction (a parquet table); without them predict stops naming the column.

Memory stays bounded on any table size: the calls are read `chunk_size` rows at a time
(new_calls.py), each chunk is cut into windows (data/windows.call_windows, as extract cuts them),
scored and written as one parquet part; the parts are joined into the output at the end
(streamed, not loaded) and the file appears whole or not at all.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl
import torch

from workflow_scripts.artifacts import MODEL_INPUT_COLUMNS_FIELD, NEW_CALL_PREDICTION_COLUMNS
from workflow_scripts.config.types import ExperimentSection
from workflow_scripts.data.fasta import open_genome
from workflow_scripts.data.tables import ParquetParts
from workflow_scripts.errors import InputError
from workflow_scripts.evaluation.predict import (
    evaluation_device,
    load_trained_model,
    model_with_weights,
    predict,
)
from workflow_scripts.inference.new_calls import (
    call_columns,
    calls_schema,
    check_header,
    checked_chunk,
    chunk_windows,
    read_chunks,
)
from workflow_scripts.models.call_inputs import feature_matrix
from workflow_scripts.models.score_channels import BaseProfiles, read_profiles, saved_score_channels
from workflow_scripts.tokenization.tokenizers import load_tokenizer, window_token_lengths
from workflow_scripts.training.batches import BatchCollator, SplitData
from workflow_scripts.training.trained_on import check_trained_on

P_ERROR, FLAG = NEW_CALL_PREDICTION_COLUMNS
PROGRESS_EVERY_S = 30.0


@dataclass(frozen=True)
class PredictPaths:
    calls: str
    genome: str  # a genome index directory or a FASTA
    model: str
    model_config: str
    metrics: str  # the experiment's metrics.json: the threshold
    out: str


@dataclass(frozen=True)
class PredictSettings:
    flank: int  # window.flank: the windows the model was trained on
    batch_size: int  # evaluate.batch_size
    chunk_size: int  # predict.chunk_size: calls per chunk


class TrainedModel:
    """A trained model with the tokenizer and device evaluate uses; `p_error(sequences)`."""

    def __init__(self, model: torch.nn.Module, saved: dict, batch_size: int):
        self.model, self.saved = model, saved
        self.tokenizer = load_tokenizer(self.saved["tokenizer"])
        self.batch_size, self.device = batch_size, evaluation_device()

    @classmethod
    def from_files(cls, model_path: str, config_path: str, batch_size: int) -> TrainedModel:
        """model.pt (tensors only) and model.json as train wrote them."""
        return cls(*load_trained_model(model_path, config_path), batch_size)

    @classmethod
    def from_weights(
        cls, state: dict, saved: dict, batch_size: int, model_path: str, config_path: str
    ) -> TrainedModel:
        """Weights already read (sites.transfer: safetensors) and their model.json."""
        return cls(model_with_weights(saved, state, model_path, config_path), saved, batch_size)

    @property
    def input_columns(self) -> list[str]:
        return list(self.saved.get(MODEL_INPUT_COLUMNS_FIELD) or [])

    def features(self, calls: pl.DataFrame, source) -> np.ndarray | None:
        """The call inputs the model takes (models/call_inputs.py) from these calls' columns."""
        return feature_matrix(calls, self.input_columns, source)

    @property
    def score_channels(self) -> list[str]:
        return saved_score_channels(self.saved)

    def profiles(self, windows: pl.DataFrame, source) -> BaseProfiles | None:
        """The score channels the model takes (models/score_channels.py): per-base lists beside
        each window's `sequence`, one score per base in its reading direction."""
        return read_profiles(windows, self.score_channels, source)

    def as_split(
        self,
        sequences: list[str],
        lengths: np.ndarray,
        features: np.ndarray | None = None,
        profiles: BaseProfiles | None = None,
    ) -> SplitData:
        """Unlabelled windows in the shape evaluate batches (token lengths order the batches)."""
        n = len(sequences)
        token_lengths = window_token_lengths(self.tokenizer, lambda: sequences, lengths)
        return SplitData(
            ids=[str(i) for i in range(n)],
            gene_ids=[""] * n,
            sequences=sequences,
            labels=np.zeros(n, dtype=np.int64),
            lengths=np.asarray(lengths, dtype=np.int64),
            token_lengths=np.asarray(token_lengths, dtype=np.int64),
            buckets=np.zeros(n, dtype=np.int64),
            features=features,
            profiles=profiles,
        )

    def p_error(
        self,
        sequences: list[str],
        lengths: np.ndarray,
        features: np.ndarray | None = None,
        profiles: BaseProfiles | None = None,
    ) -> np.ndarray:
        if not sequences:
            return np.zeros(0)
        data = self.as_split(sequences, lengths, features, profiles)
        collator = BatchCollator(data, self.tokenizer, self.saved["max_tokens"])
        return predict(self.model, data, collator, self.batch_size, self.device)


def chosen_threshold(metrics_path: str) -> float:
    """The threshold evaluate chose (metrics.json threshold_choice.threshold)."""
    if not Path(metrics_path).is_file():
        raise InputError(metrics_path, "threshold_choice", "file does not exist (has evaluate finished?)")
    try:
        return float(json.loads(Path(metrics_path).read_text())["threshold_choice"]["threshold"])
    except (ValueError, KeyError, TypeError):
        raise InputError(metrics_path, "threshold_choice", "no threshold in it (rerun evaluate)") from None


def scored_chunk(
    chunk: pl.DataFrame,
    paths: PredictPaths,
    genome,
    model: TrainedModel,
    settings: PredictSettings,
    threshold: float,
) -> pl.DataFrame:
    checked = checked_chunk(chunk, paths.calls, genome, [*model.input_columns, *model.score_channels])
    windows = chunk_windows(checked, genome, settings.flank)
    features = model.features(checked, paths.calls)
    profiles = model.profiles(checked.with_columns(windows["sequence"]), paths.calls)
    sequences, lengths = windows["sequence"].to_list(), windows["length"].to_numpy()
    probs = model.p_error(sequences, lengths, features, profiles)
    return call_columns(checked).with_columns(
        pl.Series(P_ERROR, probs, dtype=pl.Float64), pl.Series(FLAG, probs >= threshold, dtype=pl.Boolean)
    )


def empty_output(paths: PredictPaths) -> pl.DataFrame:
    frame = pl.DataFrame(schema=calls_schema(paths.calls))
    return frame.with_columns(
        pl.col("position").cast(pl.Int64),
        pl.lit(None, pl.Float64).alias(P_ERROR),
        pl.lit(None, pl.Boolean).alias(FLAG),
    )


def predict_calls(
    paths: PredictPaths, settings: PredictSettings, experiment_section: ExperimentSection
) -> dict:
    """Write the scored calls (every input column, then NEW_CALL_PREDICTION_COLUMNS); return counts.
    `experiment_section`: the run's experiments: entry, which the model must have been trained for."""
    model = TrainedModel.from_files(paths.model, paths.model_config, settings.batch_size)
    check_trained_on(model.saved, paths.model_config, experiment_section, settings.flank, model.tokenizer)
    check_header(paths.calls, [*model.input_columns, *model.score_channels], paths.model_config)
    experiment = experiment_section.name
    threshold, genome = chosen_threshold(paths.metrics), open_genome(paths.genome)
    counts, began = {"calls": 0, "flagged": 0}, time.perf_counter()
    logged = began
    metadata = {"experiment": experiment, "threshold": repr(threshold)}
    with ParquetParts(paths.out, empty_output(paths), metadata=metadata) as writer:
        for chunk in read_chunks(paths.calls, settings.chunk_size):
            scored = scored_chunk(chunk, paths, genome, model, settings, threshold)
            writer.add(scored)
            counts["calls"] += scored.height
            counts["flagged"] += int(scored[FLAG].sum())
            if time.perf_counter() - logged > PROGRESS_EVERY_S:
                log(f"predict: {counts['calls']:,} calls scored ({rate(counts['calls'], began)})")
                logged = time.perf_counter()
        writer.close()
    log(
        f"predict: {experiment}: {counts['flagged']:,} of {counts['calls']:,} calls flagged as likely errors "
        f"(p_error >= {threshold:.4f}, the threshold evaluate chose) on {model.device.type}; "
        f"{rate(counts['calls'], began)}"
    )
    return {**counts, "threshold": threshold, "seconds": time.perf_counter() - began}


def rate(calls: int, began: float) -> str:
    return f"{calls / max(time.perf_counter() - began, 1e-9):,.0f} calls/s"


def log(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
