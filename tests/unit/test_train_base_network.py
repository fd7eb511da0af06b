"""train_base's network cuts each unit's output to what later units still read: the core's
scores stay those of OpenSpliceAI's own (uncut) module, while the widest units run on fewer
positions than the input holds."""

from __future__ import annotations

import pytest
import torch

from workflow_scripts.calling.openspliceai import OpenSpliceAIModel, SkipConv
from workflow_scripts.training.base.network import build_network


@pytest.mark.parametrize("context", [80, 400, 2000])
def test_the_cut_network_scores_the_core_as_openspliceais_module_does(context):
    network, _ = build_network(context, None, seed=5)
    for module in network.modules():  # running statistics away from 0/1, so eval mode is a real test
        if isinstance(module, torch.nn.BatchNorm1d):
            module.running_mean.uniform_(-0.5, 0.5)
            module.running_var.uniform_(0.5, 2.0)
    network.eval()
    reference = OpenSpliceAIModel(32, network.units)
    reference.load_state_dict(network.state_dict())
    reference.eval()
    x = torch.nn.functional.one_hot(torch.randint(0, 4, (2, context + 301)), 4).permute(0, 2, 1).float()
    with torch.no_grad():
        ours = torch.softmax(network(x), dim=1)
        theirs = reference(x)
    assert ours.shape == theirs.shape == (2, 3, 301)
    torch.testing.assert_close(ours, theirs, rtol=1e-4, atol=1e-6)


def test_each_unit_runs_on_the_core_plus_the_flank_still_to_be_read():
    network, _ = build_network(400, None, seed=6)
    seen: list[int] = []
    for layer in network.residual_units:
        if not isinstance(layer, SkipConv):
            layer.register_forward_hook(lambda module, args, out: seen.append(args[0].shape[2]))
    network.train()
    out = network(torch.randn(2, 4, 400 + 100))
    out.sum().backward()  # the cut graph trains
    reaches = [layer.reach for layer in network.residual_units if not isinstance(layer, SkipConv)]
    assert sum(reaches) == 200  # half the context
    expected = [500 - 2 * sum(reaches[:index]) for index in range(len(reaches))]
    assert seen == expected and seen[-1] == 100 + 2 * reaches[-1]
    assert out.shape == (2, 3, 100)


def test_frozen_batch_norms_train_scale_and_shift_on_the_running_statistics():
    """train_base.batch_norm frozen: in training mode every batch norm normalises by its running
    statistics (the output is the eval-mode output) and never updates them; its scale and shift,
    and every convolution, still learn. batch (the default): batch statistics, running ones move."""
    network, _ = build_network(400, None, seed=7)
    for module in network.modules():
        if isinstance(module, torch.nn.BatchNorm1d):
            module.running_mean.uniform_(-0.5, 0.5)
            module.running_var.uniform_(0.5, 2.0)
    x = torch.nn.functional.one_hot(torch.randint(0, 4, (2, 400 + 200)), 4).permute(0, 2, 1).float()
    before = {key: value.clone() for key, value in network.state_dict().items()}
    network.eval()
    with torch.no_grad():
        eval_out = network(x)
    network.freeze_norms(True)
    network.train()
    assert network.training and not any(
        m.training for m in network.modules() if isinstance(m, torch.nn.BatchNorm1d)
    )
    optimizer = torch.optim.SGD(network.parameters(), lr=0.1)
    out = network(x)
    torch.testing.assert_close(out, eval_out)
    out.logsumexp(dim=1).mean().backward()
    optimizer.step()
    after = network.state_dict()
    for key in before:
        if key.endswith(("running_mean", "running_var", "num_batches_tracked")):
            assert torch.equal(after[key], before[key]), key
    assert not torch.equal(
        after["residual_units.0.batchnorm1.weight"], before["residual_units.0.batchnorm1.weight"]
    )
    assert not torch.equal(after["residual_units.0.conv1.weight"], before["residual_units.0.conv1.weight"])
    network.freeze_norms(False)  # back to batch statistics: the running ones move
    network.train()
    network(x)
    moved = network.state_dict()["residual_units.0.batchnorm1.running_mean"]
    assert not torch.equal(moved, before["residual_units.0.batchnorm1.running_mean"])
