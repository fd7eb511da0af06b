"""The training loop in one process (no torchrun): what it reads back from the device only when
it logs (the loss, the stop signal) and validation batches cut by a token budget."""

import re

import numpy as np
import pytest
import torch

from tests.train_fixtures import make_training_inputs
from workflow_scripts.config.types import complete_typed_sections
from workflow_scripts.models.builtin import build_model
from workflow_scripts.tokenization.tokenizers import NucleotideTokenizer
from workflow_scripts.training.batches import BatchCollator, budget_batches, load_split
from workflow_scripts.training.checkpoint import CheckpointManager
from workflow_scripts.training.distributed import DistContext
from workflow_scripts.training.loop import Trainer
from workflow_scripts.training.objectives import build_objective
from workflow_scripts.training.stop_signal import StopRequest, TrainingInterrupted
from workflow_scripts.training.strategies import build_engine
from workflow_scripts.training.telemetry import MetricsSink

TOKENIZER = NucleotideTokenizer(1)
MAX_TOKENS = 128
BATCH_SIZES = [8, 6, 4]  # train_fixtures' summary


@pytest.fixture(scope="module")
def splits(tmp_path_factory):
    inputs = make_training_inputs(tmp_path_factory.mktemp("data"))
    return tuple(load_split(inputs["windows"], inputs["manifest"], split) for split in ("train", "val"))


def make_trainer(splits, work, **train):
    sections = complete_typed_sections(
        {"train": {"epochs": 1, "lr": 1e-3, "precision": "fp32", "seed": 0, **train}},
        required=("model", "train"),
    )
    cfg = sections["train"]
    objective = build_objective("classification", cfg.objective_settings(), sections["model"])
    ctx = DistContext(rank=0, local_rank=0, world_size=1, device=torch.device("cpu"), backend=None)
    torch.manual_seed(0)
    model = build_model({"d_model": 8, "n_layers": 1}, TOKENIZER.vocab_size, MAX_TOKENS)
    train, val = splits
    trainer = Trainer(
        objective,
        cfg.loop_settings(),
        ctx,
        lambda total: build_engine(model, ctx, cfg, total),
        train,
        val,
        (BatchCollator(train, TOKENIZER, MAX_TOKENS), BatchCollator(val, TOKENIZER, MAX_TOKENS)),
        BATCH_SIZES,
        CheckpointManager(work / "checkpoints", True),
        MetricsSink(work / "steps.jsonl", True),
    )
    trainer.bar.enabled = False
    return trainer


def test_validation_batches_stay_within_trainings_largest_batch_and_score_alike(splits, tmp_path):
    trainer = make_trainer(splits, tmp_path)
    validator = trainer.validator
    longest = np.minimum(splits[0].token_lengths, MAX_TOKENS)
    assert validator.batch_tokens == max(
        size * longest[splits[0].buckets == bucket].max() for bucket, size in enumerate(BATCH_SIZES)
    )
    lengths = validator.token_lengths
    batches = [indices for indices, _ in validator.padded_batches()]
    assert sorted(i for b in batches for i in b) == list(range(len(splits[1])))
    assert len(batches) > 1 and all(len(b) * lengths[b].max() <= validator.batch_tokens for b in batches)
    reference = validator.validate(trainer.engine)
    for budget in (1, 300, 10**9):  # one window per batch ... the whole split at once
        validator.batch_tokens = budget
        result = validator.validate(trainer.engine)
        assert result.keys() == reference.keys()
        for key, value in reference.items():
            assert result[key] == pytest.approx(value, abs=1e-6), (budget, key)


def test_budget_batches_hold_at_least_one_window_and_split_ranks():
    lengths = np.array([5, 50, 7, 6, 100, 5])
    assert budget_batches(lengths, 17) == [[0, 5], [3, 2], [1], [4]]  # 3 x 6 = 18 > 17
    assert budget_batches(lengths, 28) == [[0, 5, 3, 2], [1], [4]]  # 4 x 7 = 28
    assert budget_batches(lengths, 200, rank=1, world_size=2) == [[5, 3, 1]]
    assert budget_batches(lengths[:0], 200) == []


def test_a_non_finite_loss_names_the_steps_since_the_last_check(splits, tmp_path):
    trainer = make_trainer(splits, tmp_path, lr=1e30, log_every_steps=4, checkpoint_every_steps=1000)
    with pytest.raises(FloatingPointError) as raised:
        trainer.train()
    found = re.fullmatch(
        r"rank 0: loss is (nan|inf|-inf) at step (\d+) \(epoch 1\); lower train.lr or use fp32 "
        r"\(checked every train.log_every_steps: non-finite in steps (\d+)-(\d+)\)",
        str(raised.value),
    )
    assert found, str(raised.value)
    step, first, last = (int(found.group(i)) for i in (2, 3, 4))
    assert step == last and step % 4 == 0 and first == step - 3
    assert not list((tmp_path / "checkpoints").glob("step-*"))


def test_a_stop_signal_is_acted_on_at_the_next_log_record_with_a_checkpoint(splits, tmp_path):
    trainer = make_trainer(splits, tmp_path, log_every_steps=3, checkpoint_every_steps=1000)
    StopRequest.signum = 15  # noted before the first step: as if SIGTERM arrived during it
    try:
        with pytest.raises(TrainingInterrupted) as raised:
            trainer.train()
    finally:
        StopRequest.signum = 0
    assert raised.value.step == 3
    assert (tmp_path / "checkpoints" / "step-00000003" / "trainer.pt").exists()
