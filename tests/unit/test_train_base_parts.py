"""train_base's parts without torchrun: the network (OpenSpliceAI's keys, a Keras .h5 mapped onto
them gives the Keras port's scores, frozen units), the blocks cropped for a smaller context
(labels aligned with the network's output), token-budget batches, the epoch order every world
size shares, and the loss over labelled positions only."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from testkit.keras_h5_writer import write_spliceai_h5
from tests.base_data_fixtures import write_base_data
from workflow_scripts.calling.keras_h5 import read_keras_model
from workflow_scripts.calling.openspliceai import OpenSpliceAIModel, unit_shapes
from workflow_scripts.calling.spliceai import SpliceAIModel
from workflow_scripts.config.sections import complete_section, section_schema
from workflow_scripts.config.stages.train_base import JOB_KEYS
from workflow_scripts.config.train_base import TrainBaseSection
from workflow_scripts.errors import InputError
from workflow_scripts.training.base.blocks import budget_batches, epoch_order, load_blocks, mixed_batches
from workflow_scripts.training.base.network import BaseNetwork, build_network, keras_state_dict
from workflow_scripts.training.base.objective import L2SP, position_loss
from workflow_scripts.training.optim import build_optimizer


def section(**values) -> TrainBaseSection:
    return TrainBaseSection.from_completed(complete_section("train_base", values))


@pytest.mark.parametrize("context, units", [(80, 4), (400, 8), (2000, 12), (10000, 16)])
def test_scratch_networks_have_openspliceai_keys_for_every_flank(context, units):
    network, start = build_network(context, None, seed=3)
    assert start.kind == "scratch" and network.units == units and network.context == context
    reference = OpenSpliceAIModel(32, units)
    assert list(network.state_dict()) == list(reference.state_dict())
    x = torch.randn(2, 4, context + 37)
    assert network(x).shape == (2, 3, 37)


def test_a_keras_h5_maps_onto_openspliceai_keys_with_the_keras_ports_scores(tmp_path):
    path = write_spliceai_h5(tmp_path / "m.h5", seed=4, units=unit_shapes(4), channels=8, group=4)
    state, notes = keras_state_dict(path)
    network = BaseNetwork(4, channels=8, leak=0.0, eps=1e-3)  # SpliceAI's ReLU and epsilon
    network.load_state_dict(state)
    network.eval()
    port = SpliceAIModel(read_keras_model(path))
    x = torch.nn.functional.one_hot(torch.randint(0, 4, (2, 300)), 4).permute(0, 2, 1).float()
    with torch.no_grad():
        ours = torch.softmax(network(x), dim=1)
        theirs = port(x)
    assert torch.allclose(ours, theirs, atol=1e-5), (ours - theirs).abs().max()
    assert "LeakyReLU" in notes[0]  # trained with OpenSpliceAI's activation, and it says so


def test_a_file_of_another_flank_is_refused_in_one_line(tmp_path):
    path = tmp_path / "m.pt"
    torch.save(OpenSpliceAIModel(32, 8).state_dict(), path)
    with pytest.raises(InputError, match="8 residual units .flank 400., not 80"):
        build_network(80, str(path), seed=0)


def test_frozen_units_keep_their_weights_and_batch_norm_statistics():
    network, _ = build_network(80, None, seed=1)
    before = {key: value.clone() for key, value in network.state_dict().items()}
    network.set_trainable(1)
    optimizer = torch.optim.SGD([p for p in network.parameters() if p.requires_grad], lr=0.1)
    network.train()
    loss = network(torch.randn(2, 4, 200)).pow(2).mean()
    loss.backward()
    optimizer.step()
    after = network.state_dict()
    frozen = ("initial_conv.", "initial_skip.", "residual_units.0.", "residual_units.1.", "residual_units.2.")
    trained = ("residual_units.3.", "residual_units.4.", "final_conv.")
    for key in before:
        if key.startswith(frozen):
            assert torch.equal(before[key], after[key]), key
    changed = [key for key in before if key.startswith(trained) and not torch.equal(before[key], after[key])]
    assert "residual_units.3.conv2.weight" in changed and "final_conv.weight" in changed
    assert "residual_units.3.batchnorm1.running_mean" in changed  # the trained unit's BN learns


def test_blocks_are_cropped_so_the_output_covers_the_core_exactly(tmp_path):
    files = write_base_data(tmp_path, context=400, blocks=12)
    wide = load_blocks(files, "train", 400)
    narrow = load_blocks(files, "train", 80)
    assert (wide.lengths - narrow.lengths == 320).all()
    x, y = narrow.batch([0, 1])
    assert x.shape[2] == int(narrow.lengths[[0, 1]].max()) and y.shape[1] == x.shape[2] - 80
    for row, index in enumerate([0, 1]):
        core = wide.core_labels(index)
        assert (core >= 0).all() and np.array_equal(y[row, : len(core)].numpy(), core)
        assert (y[row, len(core) :] == -1).all()  # padding is never labelled
    labels = np.load(files.labels)
    assert (labels[wide.starts[0] : wide.starts[0] + 200] == -1).all()  # the flanks are unlabelled
    with pytest.raises(InputError, match="carry 400 nt of context"):
        load_blocks(files, "train", 2000)


def test_budget_batches_and_an_epoch_order_shared_by_every_world_size():
    lengths = np.array([100, 900, 120, 480, 500, 2500, 110])
    batches = budget_batches(lengths, 1000)
    assert sorted(i for b in batches for i in b) == list(range(7))
    assert all(len(b) * lengths[b].max() <= 1000 or len(b) == 1 for b in batches)
    assert [5] in batches  # longer than the budget: alone
    order = epoch_order(batches, seed=3, epoch=1, multiple=4)
    assert len(order) % 4 == 0 and order == epoch_order(batches, seed=3, epoch=1, multiple=4)
    assert order[: len(batches)] != epoch_order(batches, seed=3, epoch=2, multiple=4)[: len(batches)]


def test_batch_mixing_re_cuts_the_blocks_each_epoch_and_0_keeps_the_sorted_batches():
    lengths = np.array([300, 310, 320, 330, 340, 350, 360, 370, 380, 390, 1200])
    assert mixed_batches(lengths, 1000, 0.0, seed=1, epoch=4) == budget_batches(lengths, 1000)
    cuts = [mixed_batches(lengths, 1000, 0.5, seed=1, epoch=epoch) for epoch in range(4)]
    for batches in cuts:
        assert sorted(i for b in batches for i in b) == list(range(11))  # every block once
        assert all(len(b) * lengths[b].max() <= 1000 or len(b) == 1 for b in batches)
    assert cuts[0] == mixed_batches(lengths, 1000, 0.5, seed=1, epoch=0)  # the same on every rank
    groups = [{frozenset(b) for b in batches} for batches in cuts]
    assert len({frozenset(g) for g in groups}) > 1  # new groups in some epoch


def test_adamw_beta2_and_decay_of_every_parameter_are_train_bases_settings():
    network = torch.nn.Conv1d(4, 3, 1)
    base = section(adam_beta2=0.999).train_config(seed=0)
    assert build_optimizer(network, base).param_groups[0]["betas"] == (0.9, 0.999)
    assert complete_section("train", {})["adam_beta2"] == 0.98
    groups = build_optimizer(network, base).param_groups
    assert [(len(g["params"]), g["weight_decay"]) for g in groups] == [(1, 0.01), (1, 0.0)]  # weight; bias
    everything = section(decay_all_parameters=True).train_config(seed=0)
    groups = build_optimizer(network, everything).param_groups
    assert [(len(g["params"]), g["weight_decay"]) for g in groups] == [(2, 0.01)]


def test_the_loss_counts_labelled_positions_only_and_focal_at_gamma_0_is_cross_entropy():
    logits = torch.randn(2, 3, 10)
    labels = torch.randint(0, 3, (2, 10))
    labels[:, 7:] = -1
    ce = position_loss(logits, labels, "cross_entropy", 0.0)
    expected = torch.nn.functional.cross_entropy(logits[:, :, :7], labels[:, :7])
    assert torch.allclose(ce, expected)
    assert torch.allclose(position_loss(logits, labels, "focal", 0.0), ce)
    assert position_loss(logits, torch.full((2, 10), -1), "cross_entropy", 0.0) == 0


def test_l2sp_is_half_the_strength_times_the_squared_distance_of_trained_weights():
    network, _ = build_network(80, None, seed=0)
    pull = L2SP(network, 2.0)
    with torch.no_grad():
        network.final_conv.bias.add_(1.0)
    assert torch.isclose(pull.penalty(network), torch.tensor(0.5 * 2.0 * 3.0))
    network.set_trainable(1)
    with torch.no_grad():
        network.initial_conv.bias.add_(1.0)  # frozen: no pull
    assert torch.isclose(pull.penalty(network), torch.tensor(3.0))


def test_the_unit_schedule_and_what_sharded_strategies_refuse():
    schedule = section(trainable_units=[1, 4, "all"])
    assert [schedule.units_at(e) for e in range(5)] == [1, 4, 0, 0, 0]
    assert section().units_at(3) == 0 and not section().freezes()
    with pytest.raises(InputError, match="train_base.trainable_units"):
        section(trainable_units=["last"]).check()
    with pytest.raises(InputError, match="train_base.strategy"):
        section(strategy="fsdp", l2sp=0.1).check()
    section(strategy="deepspeed", zero_stage=2, l2sp=0.1).check()


def test_what_every_rank_would_fail_on_is_one_line_before_torchrun(tmp_path):
    from workflow_scripts.training.base.run_files import BaseRun
    from workflow_scripts.training.base.start import check_run
    from workflow_scripts.training.launch import Resources

    files = write_base_data(tmp_path / "data", context=400, blocks=8)
    wrong = tmp_path / "m.pt"
    torch.save(OpenSpliceAIModel(8, 8).state_dict(), wrong)
    run = BaseRun(1, files, None, "m.pt", "p.json", "c.md", str(tmp_path / "run"))
    cpu = Resources(0, 2, 2, 1)
    check_run(run, section(context=80), cpu)
    with pytest.raises(InputError, match="carry 400 nt of context; train_base.context 2000"):
        check_run(run, section(context=2000), cpu)
    with pytest.raises(InputError, match="flank 400"):
        check_run(BaseRun(1, files, str(wrong), "", "", "", ""), section(context=80), cpu)
    with pytest.raises(InputError, match="train_base.l2sp"):
        check_run(run, section(context=80, l2sp=0.5), cpu)
    with pytest.raises(InputError, match="train_base.precision|fp16 needs a CUDA GPU"):
        check_run(run, section(context=80, precision="fp16"), cpu)


def test_calling_base_model_weights_may_name_train_bases_folder(tmp_path, monkeypatch):
    from workflow_scripts import layout
    from workflow_scripts.config.sections import schema
    from workflow_scripts.config.validate import validate_config
    from workflow_scripts.workflow.preflight import check_calling_inputs, check_inputs_outside_outputs
    from workflow_scripts.workflow.rule_files import RuleFiles

    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.gtf").write_text('c1\t.\tgene\t1\t9\t.\t+\t.\tgene_id "g";\n')
    config = {
        "experiments": [{"name": "e", "error_label": "FP", "correct_label": "TP"}],
        "genome": "g.fa",
        "calling": {
            "start": "annotation",
            "annotation": "a.gtf",
            "base_model": {"weights": "results/train_base/models/"},
        },
        "train_base": {"context": 400, "seeds": [3, 4]},
    }
    validated = validate_config(config, schema())
    check_inputs_outside_outputs(validated)  # the run's own output, on purpose
    check_calling_inputs(validated["calling"])  # not there yet: train_base makes it
    assert RuleFiles(validated, (), ()).base_model_weights() == [
        layout.TRAIN_BASE_MODEL.format(context=400, seed=seed) for seed in (3, 4)
    ]
    validated["calling"]["base_model"]["weights"] = "results/other"
    with pytest.raises(InputError, match="lies inside this run's own outputs"):
        check_inputs_outside_outputs(validated)


def test_a_peers_gene_split_re_splits_the_blocks(tmp_path):
    from benchmarks.train_base.run import with_gene_split

    files = write_base_data(tmp_path / "data", context=400, blocks=12)
    split_of = {f"g{i}": "validation" if i < 3 else "train" for i in range(11)}  # g11: in no split
    resplit, left_out = with_gene_split(files, split_of, tmp_path / "resplit")
    assert left_out == 1 and resplit.sequence == files.sequence
    assert len(load_blocks(resplit, "validation", 80)) == 3 and len(load_blocks(resplit, "train", 80)) == 8
    assert len(load_blocks(resplit, "test", 80)) == 0


def test_export_picks_the_trained_epoch_of_the_best_validation_else_the_last(tmp_path):
    from workflow_scripts.training.base.export import chosen_epoch
    from workflow_scripts.training.base.run_files import BaseRun
    from workflow_scripts.training.base.start import check_run
    from workflow_scripts.training.launch import Resources

    def record(epoch: int, loss: float, acceptor: float, donor: float) -> dict:
        return {"epoch": epoch, "val_loss": loss, "acceptor_auprc": acceptor, "donor_auprc": donor}

    history = [
        record(0, 0.1, 0.9, 0.9),  # the start weights: never exported
        record(1, 0.5, 0.2, float("nan")),
        record(2, 0.3, 0.6, 0.5),
        record(3, 0.3, 0.7, 0.2),
        record(4, 0.4, 0.4, 0.4),
    ]
    assert chosen_epoch(history, "last") is None
    assert chosen_epoch(history, "best_val_loss")["epoch"] == 2  # the earliest of equals
    assert chosen_epoch(history, "best_val_auprc")["epoch"] == 2  # mean 0.55; NaN counts lowest
    with pytest.raises(InputError, match="train_base.export"):
        chosen_epoch(history[:1], "best_val_loss")
    no_validation = write_base_data(tmp_path / "data", context=400, blocks=5)  # every 6th validates
    run = BaseRun(1, no_validation, None, "m.pt", "p.json", "c.md", str(tmp_path / "run"))
    check_run(run, section(context=80), Resources(0, 2, 2, 1))
    with pytest.raises(InputError, match="no validation blocks: train_base.export best_val_loss"):
        check_run(run, section(context=80, export="best_val_loss"), Resources(0, 2, 2, 1))


def test_evaluate_base_may_name_train_bases_folder_trained_in_the_same_run(tmp_path, monkeypatch):
    """Its seeds' model files, not the folder's content when the workflow is parsed (absent then)."""
    from workflow_scripts import layout
    from workflow_scripts.config.sections import schema
    from workflow_scripts.config.validate import validate_config
    from workflow_scripts.workflow.preflight import check_base_inputs
    from workflow_scripts.workflow.rule_files import RuleFiles

    monkeypatch.chdir(tmp_path)
    (tmp_path / "reference").mkdir()
    torch.save(OpenSpliceAIModel(8, 4).state_dict(), tmp_path / "reference" / "model_80nt_rs1.pt")
    config = {
        "experiments": [{"name": "e", "error_label": "FP", "correct_label": "TP"}],
        "genome": "g.fa",
        "calling": {"start": "annotation", "annotation": "a.gtf", "base_model": {"weights": "reference"}},
        "train_base": {"context": 80, "seeds": [3, 4]},
        "evaluate_base": {"models": ["reference", "./results/train_base/models/"]},
    }
    validated = validate_config(config, schema())
    check_base_inputs(validated)
    assert RuleFiles(validated, (), ()).evaluate_base_weights() == [
        "reference/model_80nt_rs1.pt",
        *[layout.TRAIN_BASE_MODEL.format(context=80, seed=seed) for seed in (3, 4)],
    ]


def test_every_train_base_key_that_shapes_a_run_reaches_the_job():
    """A schema key missing from the stage's declared keys is silently dropped from the job's
    --config (the job then runs on the schema's default): every key but those that shape the
    workflow (enabled, seeds) or enter as a declared input (init_weights) must be declared."""
    keys = set(section_schema("train_base")["properties"])
    assert keys - {"enabled", "seeds", "init_weights"} == set(JOB_KEYS)
    assert section(batch_norm="frozen").batch_norm == "frozen"
