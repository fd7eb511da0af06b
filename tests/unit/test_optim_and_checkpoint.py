import pytest
import torch

from workflow_scripts.config.train import settings_digest
from workflow_scripts.training.checkpoint import CheckpointManager, run_signature
from workflow_scripts.training.optim import warmup_cosine


def test_schedule_warms_up_then_decays_to_the_floor():
    multiplier = warmup_cosine(total_steps=100, warmup_fraction=0.1, min_lr_ratio=0.05)
    warmup = [multiplier(s) for s in range(10)]
    assert warmup == sorted(warmup) and warmup[0] == pytest.approx(0.1) and warmup[-1] == 1.0
    decay = [multiplier(s) for s in range(10, 101)]
    assert decay == sorted(decay, reverse=True)
    assert decay[-1] == pytest.approx(0.05)


def save(manager, step, payload=None):
    def write_shards(folder):
        torch.save({"weights": torch.full((2,), float(step))}, folder / "shard.pt")

    return manager.save(step, payload or {"progress": {"step": step}}, write_shards)


def test_checkpoints_keep_the_latest_two_and_load_without_pickle(tmp_path):
    manager = CheckpointManager(tmp_path, is_main=True)
    for step in (10, 20, 30):
        save(manager, step)
    assert sorted(p.name for p in tmp_path.glob("step-*")) == ["step-00000020", "step-00000030"]
    assert not list(tmp_path.glob(".*partial"))
    latest = manager.latest_path()
    assert latest.name == "step-00000030" and (latest / "shard.pt").exists()
    assert manager.load_trainer_state(latest)["progress"]["step"] == 30


def test_a_save_killed_half_way_leaves_the_last_good_checkpoint(tmp_path):
    manager = CheckpointManager(tmp_path, is_main=True)
    save(manager, 10)

    def dies(folder):
        (folder / "shard.pt").write_bytes(b"half")
        raise KeyboardInterrupt  # stands in for SIGKILL during the write

    with pytest.raises(KeyboardInterrupt):
        manager.save(20, {"progress": {"step": 20}}, dies)
    assert manager.latest_path().name == "step-00000010"
    save(manager, 20)  # the next save clears the partial folder
    assert manager.latest_path().name == "step-00000020" and not list(tmp_path.glob(".*partial"))


class Payload:
    """Any class: loading it would need arbitrary unpickling."""


def test_a_pickled_object_is_refused(tmp_path):
    (tmp_path / "step-00000001").mkdir()
    torch.save({"evil": Payload()}, tmp_path / "step-00000001" / "trainer.pt")
    (tmp_path / "latest").write_text("step-00000001\n")
    manager = CheckpointManager(tmp_path, is_main=True)
    with pytest.raises(Exception, match="(?i)weights_only|unsupported"):
        manager.load_trainer_state(manager.latest_path())


def test_no_latest_means_a_fresh_start(tmp_path):
    assert CheckpointManager(tmp_path / "new", is_main=True).latest_path() is None


def test_checkpoints_of_another_run_are_not_resumed(tmp_path):
    first = CheckpointManager(tmp_path, is_main=True, signature={"lr": 0.1})
    save(first, 10)
    first.save_best({"w": torch.zeros(1)})
    assert (
        CheckpointManager(tmp_path, is_main=True, signature={"lr": 0.1}).latest_path().name == "step-00000010"
    )
    other = CheckpointManager(tmp_path, is_main=True, signature={"lr": 0.2})
    assert other.latest_path() is None and other.load_best() is None


def test_run_signature_changes_with_inputs_and_settings_not_logging(tmp_path):
    data = tmp_path / "windows.parquet"
    data.write_bytes(b"x")
    base = run_signature(
        settings_digest({"lr": 0.1, "log_every_steps": 5}),
        {"d_model": 8},
        2,
        {"windows": data, "genome": None},
        genome_windows=100,
    )
    assert base["inputs"] == {"windows": [1, data.stat().st_mtime_ns]}
    assert (
        run_signature(
            settings_digest({"lr": 0.1, "log_every_steps": 50}),
            {"d_model": 8},
            2,
            {"windows": data},
            genome_windows=100,
        )
        == base
    )
    assert settings_digest({"lr": 0.2, "log_every_steps": 5}) != base["train"]
    assert (
        run_signature(settings_digest({"lr": 0.1}), {"d_model": 8}, 2, {"windows": data}, genome_windows=200)
        != base
    )
    data.write_bytes(b"xy")
    assert (
        run_signature(settings_digest({"lr": 0.1}), {"d_model": 8}, 2, {"windows": data}, genome_windows=100)
        != base
    )


def test_a_finished_run_is_not_resumed_by_the_next(tmp_path, capsys):
    first = CheckpointManager(tmp_path, is_main=True, signature={"lr": 0.1})
    save(first, 10)
    assert (
        CheckpointManager(tmp_path, is_main=True, signature={"lr": 0.1}).latest_path().name == "step-00000010"
    )
    first.mark_finished()  # the model was exported: a rerun now is a forced one
    again = CheckpointManager(tmp_path, is_main=True, signature={"lr": 0.1})
    assert again.latest_path() is None and again.resume_candidates() == []
    assert "finished (its model was exported): starting afresh" in capsys.readouterr().out
    save(again, 5)
    assert (
        CheckpointManager(tmp_path, is_main=True, signature={"lr": 0.1}).latest_path().name == "step-00000005"
    )


def test_a_saved_checkpoint_lists_its_file_sizes_and_a_cut_file_is_named(tmp_path):
    manager = CheckpointManager(tmp_path, is_main=True)
    for step in (10, 20):
        save(manager, step)
    newest, older = manager.resume_candidates()
    assert (newest.name, older.name) == ("step-00000020", "step-00000010")
    assert manager.why_not_loadable(newest) is None
    shard = newest / "shard.pt"
    size = shard.stat().st_size
    shard.write_bytes(shard.read_bytes()[:100])
    assert manager.why_not_loadable(newest) == f"shard.pt is 100 bytes, not {size}"
    (older / "trainer.pt").unlink()
    assert manager.why_not_loadable(older) == "trainer.pt is missing"
    (older / "files.json").unlink()
    assert manager.why_not_loadable(older) == "files.json is missing or unreadable"


@pytest.mark.parametrize("objective, rule", [("classification", "train"), ("masked_lm", "pretrain")])
def test_checkpoints_are_keyed_on_the_code_of_the_rule_that_trains(tmp_path, objective, rule):
    """A code-changed rerun trains afresh: the signature holds the rule's code digest (the one
    Snakemake has as the rule's `code` param)."""
    from tests.train_fixtures import make_training_inputs
    from workflow_scripts.config.types import complete_typed_sections
    from workflow_scripts.source_digest import rule_code_digest
    from workflow_scripts.training.distributed import DistContext
    from workflow_scripts.training.objectives import build_objective
    from workflow_scripts.training.run import resume_signature
    from workflow_scripts.training.run_spec import RunSpec

    files = make_training_inputs(tmp_path, n=20)
    spec = RunSpec(
        "exp",
        str(files["windows"]),
        str(files["manifest"]),
        str(files["summary"]),
        str(tmp_path / "checkpoints"),
        "w.pt",
        "w.json",
        "steps.jsonl",
    )
    ctx = DistContext(0, 0, 1, torch.device("cpu"), None)
    sections = complete_typed_sections({}, required=("model", "train", "pretrain"))
    settings = sections["train"].objective_settings()
    built = build_objective(objective, settings, sections["model"], sections["pretrain"])
    signature = resume_signature(built, sections["train"], spec, ctx)
    assert signature["code"] == rule_code_digest(rule) and len(signature["code"]) == 16
