import pytest
import torch

from workflow_scripts.checkpoint import CheckpointManager
from workflow_scripts.optim import warmup_cosine


def test_schedule_warms_up_then_decays_to_the_floor():
    multiplier = warmup_cosine(total_steps=100, warmup_fraction=0.1, min_lr_ratio=0.05)
    warmup = [multiplier(s) for s in range(10)]
    assert warmup == sorted(warmup) and warmup[0] == pytest.approx(0.1) and warmup[-1] == 1.0
    decay = [multiplier(s) for s in range(10, 101)]
    assert decay == sorted(decay, reverse=True)
    assert decay[-1] == pytest.approx(0.05)


def test_checkpoints_keep_the_latest_two_and_load_without_pickle(tmp_path):
    manager = CheckpointManager(tmp_path, is_main=True)
    for step in (10, 20, 30):
        manager.save({"weights": torch.full((2,), float(step)), "progress": {"step": step}}, step)
    assert sorted(p.name for p in tmp_path.glob("step-*.pt")) == ["step-00000020.pt", "step-00000030.pt"]
    assert not list(tmp_path.glob("*.tmp"))
    state = manager.load_latest()
    assert state["progress"]["step"] == 30 and state["weights"][0] == 30


class Payload:
    """Any class: loading it would need arbitrary unpickling."""


def test_a_pickled_object_is_refused(tmp_path):
    torch.save({"evil": Payload()}, tmp_path / "step-00000001.pt")
    (tmp_path / "latest").write_text("step-00000001.pt\n")
    with pytest.raises(Exception, match="(?i)weights_only|unsupported"):
        CheckpointManager(tmp_path, is_main=True).load_latest()


def test_no_latest_means_a_fresh_start(tmp_path):
    assert CheckpointManager(tmp_path / "new", is_main=True).load_latest() is None
